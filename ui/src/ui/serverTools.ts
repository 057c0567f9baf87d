/**
 * A registered server's tools as its card lists them (the server's description escaped and
 * clipped, the generated Params/Result/run to read, a copy button for the import), and what
 * Regenerate changed in them: each tool added, removed or changed, a changed one's signature
 * before and after.
 */
import type { RegisteredServer, ToolSummary } from '../ipc';
import { compareSignatures, type ToolChanges } from '../model/serverForm';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { copyText } from './endpointDialog';

/** Characters of a tool description's first line in the tool's summary line (the whole
 *  description shows when the tool is opened). */
const SUMMARY_SHOWN = 160;

/** Each tool Regenerate added, removed or changed; a changed one's signature before and
 *  after, the lines that differ marked (del/ins, which screen readers announce). */
export function renderToolChanges(server: RegisteredServer, c: ToolChanges | undefined): HTMLElement | null {
  if (!c || c.added.length + c.removed.length + c.changed.length === 0) return null;
  const signature = (lines: { text: string; changed: boolean }[], tag: 'del' | 'ins', label: string): HTMLElement =>
    h(
      'pre',
      { class: `server-signature server-signature-${tag === 'del' ? 'before' : 'after'}`, tabindex: 0, 'aria-label': label },
      ...(lines.length === 0 ? [h('span', { class: 'server-signature-none', text: '(not kept by the registry)' })] : lines.flatMap((l) => [l.changed ? h(tag, { text: escapeUntrusted(l.text) }) : h('span', { text: escapeUntrusted(l.text) }), '\n'])),
    );
  const items: HTMLElement[] = [];
  for (const module of c.added) {
    const iface = server.tools.find((t) => t.module === module)?.interface ?? null;
    const after = compareSignatures(null, iface).after;
    items.push(
      h(
        'li',
        { class: 'server-change', 'data-change': 'added', 'data-tool': module },
        h('span', { class: 'server-change-kind', text: 'Added: ' }),
        h('code', { text: escapeUntrusted(module) }),
        after.length > 0 ? signature(after.map((l) => ({ ...l, changed: false })), 'ins', `Signature of ${escapeUntrusted(module)}`) : null,
      ),
    );
  }
  for (const module of c.removed) {
    items.push(
      h(
        'li',
        { class: 'server-change', 'data-change': 'removed', 'data-tool': module },
        h('span', { class: 'server-change-kind', text: 'Removed: ' }),
        h('code', { text: escapeUntrusted(module) }),
        h('span', { text: ` — cells importing mcptools.${escapeUntrusted(`${server.name}.${module}`)} fail now.` }),
      ),
    );
  }
  for (const t of c.changed) {
    const { before, after } = compareSignatures(t.before, t.after);
    items.push(
      h(
        'li',
        { class: 'server-change', 'data-change': 'changed', 'data-tool': t.module },
        h('span', { class: 'server-change-kind', text: 'Changed: ' }),
        h('code', { text: escapeUntrusted(t.module) }),
        h(
          'div',
          { class: 'server-signature-pair' },
          h('div', { class: 'server-signature-side' }, h('p', { class: 'server-signature-label', text: 'Before' }), signature(before, 'del', `${escapeUntrusted(t.module)} before`)),
          h('div', { class: 'server-signature-side' }, h('p', { class: 'server-signature-label', text: 'After' }), signature(after, 'ins', `${escapeUntrusted(t.module)} after`)),
        ),
      ),
    );
  }
  return h('ul', { class: 'server-change-list', 'aria-label': `What regenerating ${escapeUntrusted(server.name)} changed` }, ...items);
}

export function renderTool(server: string, tool: ToolSummary): HTMLElement {
  // Modules are identifiers; were one not, the line copied is the line shown (it then fails
  // to import rather than paste what nobody saw).
  const importLine = escapeUntrusted(`from mcptools.${server}.${tool.module} import Params, run`);
  const copy = h('button', { class: 'link-button server-copy', type: 'button', text: 'Copy import', 'aria-label': `Copy “${importLine}”` });
  copy.addEventListener('click', () => {
    void copyText(importLine).then((ok) => {
      copy.textContent = ok ? 'Copied' : 'Copy failed';
      setTimeout(() => (copy.textContent = 'Copy import'), 1500);
    });
  });
  // The server's words: escaped, and only a bounded first line in the summary.
  const description = escapeUntrustedLines((tool.description ?? '').trim());
  const firstLine = description.split('\n')[0] ?? '';
  const first = clipEscaped(firstLine, SUMMARY_SHOWN);
  const module = escapeUntrusted(tool.module);
  return h(
    'li',
    { class: 'server-tool', 'data-tool': tool.module },
    h(
      'details',
      {},
      h(
        'summary',
        {},
        h('code', { class: 'server-tool-name', text: module }),
        first ? h('span', { class: 'server-tool-desc', text: ` — ${first}` }) : null,
        // Two servers may both offer "echo": a screen reader hears whose it is.
        h('span', { class: 'visually-hidden', text: ` (a tool of ${server})` }),
      ),
      description.includes('\n') || first !== firstLine ? h('p', { class: 'server-tool-more', text: description }) : null,
      h('div', { class: 'server-import' }, h('code', { text: importLine }), copy),
      tool.interface
        ? h('pre', { class: 'server-interface', tabindex: 0, 'aria-label': `Generated Params, Result and run of ${module}`, text: escapeUntrustedLines(tool.interface) })
        : h('p', { class: 'panel-empty', text: 'Regenerate to see its Params and Result.' }),
    ),
  );
}

/**
 * Saved tools, in the MCP servers tab beside the servers: the code actions of the workspace
 * (`gentools/<category>/<name>/`, made with "Save cell as tool" or by an agent's
 * `save_code_action`), each with its interface and the line that imports it.
 */
import * as ipc from '../ipc';
import type { SavedTool } from '../ipc';
import { escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { copyText } from './endpointDialog';

export class SavedToolsView {
  readonly element: HTMLElement;
  private readonly list: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly error: HTMLElement;

  constructor(private readonly load: () => Promise<SavedTool[]> = () => ipc.codeActions()) {
    this.list = h('ul', { id: 'saved-tool-list', class: 'server-tools', 'aria-label': 'Saved tools' });
    this.empty = h('p', { class: 'panel-empty', text: 'No tool saved yet. “Save selected cell as a tool…” in the Run menu makes one of a cell that works; agents save theirs with save_code_action.' });
    this.error = h('p', { class: 'panel-error', role: 'alert', hidden: true });
    this.element = h(
      'section',
      { id: 'saved-tools', class: 'panel-section servers', 'aria-labelledby': 'saved-tools-heading' },
      h('h3', { id: 'saved-tools-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'Saved tools' })),
      h('p', { class: 'panel-hint', text: 'Code saved as tools of its own, in gentools/ of this workspace. The MCP tools they call still ask for your approval.' }),
      this.error,
      this.list,
      this.empty,
    );
  }

  async reload(): Promise<void> {
    try {
      const tools = await this.load();
      this.error.hidden = true;
      this.list.replaceChildren(...tools.map((t) => this.renderTool(t)));
      this.empty.hidden = tools.length > 0;
    } catch (err) {
      this.error.textContent = `The saved tools could not be read: ${escapeUntrustedLines(ipc.toBackendError(err).message)}`;
      this.error.hidden = false;
    }
  }

  /** A saved tool (an agent may have written it): its module, summary and code escaped. */
  private renderTool(tool: SavedTool): HTMLElement {
    const module = escapeUntrusted(tool.module);
    const importLine = `from ${module}.api import run`;
    const copy = h('button', { class: 'link-button server-copy', type: 'button', text: 'Copy import', 'aria-label': `Copy “${importLine}”` });
    copy.addEventListener('click', () => {
      void copyText(importLine).then((ok) => {
        copy.textContent = ok ? 'Copied' : 'Copy failed';
        setTimeout(() => (copy.textContent = 'Copy import'), 1500);
      });
    });
    const summary = escapeUntrusted(/"""([^\n"]*)/.exec(tool.api.slice(tool.api.indexOf('def run(')))?.[1]?.trim() ?? '');
    return h(
      'li',
      { class: 'server-tool', 'data-tool': tool.module },
      h(
        'details',
        {},
        h('summary', {}, h('code', { class: 'server-tool-name', text: module }), summary ? h('span', { class: 'server-tool-desc', text: ` — ${summary}` }) : null),
        h('div', { class: 'server-import' }, h('code', { text: importLine }), copy),
        h('pre', { class: 'server-interface', tabindex: 0, 'aria-label': `Interface of ${module}`, text: escapeUntrustedLines(tool.api) }),
      ),
    );
  }
}

/**
 * Under a cell's outputs: the tool calls its last run made, one short line each ("✓
 * fx.echo allowed by a rule · OK · 85 ms"). A few are listed as they are; more fold into a
 * summary line that opens. Rendered at most once per frame, however fast the calls come.
 */
import type { Cell } from '../model/cell';
import { callLabel, detailWords, progressFraction, progressWords, summarizeCalls, verdictWords, type CellToolCall } from '../model/toolCalls';
import { prettyArguments } from '../model/approvals';
import { clipEscaped } from '../model/untrusted';
import { frames, type Renderable } from '../util/frame';
import { h } from './dom';

/** Up to this many calls are listed without a summary line. */
const UNFOLDED = 3;
/** The newest this many are listed; the summary counts them all. */
const LISTED = 200;

function mark(call: CellToolCall): string {
  if (call.status === 'waiting') return '…';
  if (call.status === 'running') return '▸';
  if (call.decision === 'approved') return '✓';
  // A timed-out call is a rejected one (its colour tells the difference).
  return '✕';
}

/** A running call's progress: a bar (without a whole, one that says work goes on) and the server's words. */
function progressLine(call: CellToolCall): HTMLElement | null {
  const progress = call.status === 'running' ? call.progress : null;
  if (!progress) return null;
  const fraction = progressFraction(progress);
  const words = progressWords(progress);
  const bar = h('progress', { class: 'tool-call-progress-bar', max: 1, 'aria-label': `${callLabel(call)}: ${words}` });
  if (fraction !== null) bar.value = fraction;
  return h('div', { class: 'tool-call-progress' }, bar, h('span', { class: 'tool-call-progress-words', text: words }));
}

function row(call: CellToolCall): HTMLLIElement {
  const detail = detailWords(call);
  const args = prettyArguments(call.arguments).text;
  return h(
    'li',
    {
      class: 'tool-call',
      'data-status': call.status,
      'data-decision': call.decision ?? 'pending',
      'data-decided-by': call.decidedBy ?? 'nobody-yet',
      'data-request-id': call.id,
      title: `Arguments: ${clipEscaped(args, 600)}`,
    },
    h('span', { class: 'tool-call-mark', 'aria-hidden': 'true', text: mark(call) }),
    h('code', { class: 'tool-call-name', text: callLabel(call) }),
    h(
      'span',
      { class: 'tool-call-words' },
      h('span', { class: 'tool-call-verdict', text: verdictWords(call) }),
      detail ? h('span', { class: 'tool-call-detail', text: `${call.decision === 'approved' ? ' · ' : ': '}${detail}` }) : null,
    ),
    progressLine(call),
  );
}

export class ToolCallsView implements Renderable {
  readonly element: HTMLElement;
  private readonly folder: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly more: HTMLElement;
  private shown: readonly CellToolCall[] | null = null;

  constructor(private readonly cell: Cell) {
    this.summary = h('summary', { class: 'tool-calls-summary' });
    this.list = h('ol', { class: 'tool-call-list' });
    this.more = h('p', { class: 'tool-calls-more', hidden: true });
    this.folder = h('details', { class: 'tool-calls-folder' }, this.summary);
    this.element = h('section', { class: 'cell-tool-calls', 'aria-label': 'Tool calls of this run', hidden: true }, this.folder, this.more, this.list);
    this.render();
  }

  /** The cell's calls changed: drawn at the next frame. */
  changed(): void {
    frames.markDirty(this);
  }

  render(): void {
    const calls = this.cell.toolCalls;
    if (calls === this.shown) return;
    this.shown = calls;
    this.element.hidden = calls.length === 0;
    if (calls.length === 0) {
      this.list.replaceChildren();
      this.folder.open = false;
      return;
    }
    const folded = calls.length > UNFOLDED;
    this.folder.hidden = !folded;
    this.summary.textContent = summarizeCalls(calls);
    // Folded, the list lives inside the summary's <details>; unfolded, it stands alone.
    const home = folded ? this.folder : this.element;
    if (this.list.parentElement !== home) home.append(this.more, this.list);
    const listed = calls.slice(-LISTED);
    this.more.hidden = listed.length === calls.length;
    this.more.textContent = `The ${(calls.length - listed.length).toLocaleString('en-US')} earlier calls are in the audit log.`;
    this.list.replaceChildren(...listed.map(row));
  }
}

/**
 * The Approvals tab: the requests waiting for a decision (oldest first, with their arguments,
 * the time left before they are rejected, and Approve / Reject / Always…), group actions, the
 * recent decisions of this session (each can become a rule for its arguments), and the rules.
 * Owns its DOM; the state is an ApprovalsModel fed by the session events.
 */
import * as ipc from '../ipc';
import type { ApprovalDecision, ApprovalGrant, ApprovalRequest, ApprovalRules, AuditEntry, DefinitionChange, Rule, ServerQuestion, ToolCallEvent } from '../ipc';
import {
  allowArgumentsRule,
  allowToolRule,
  ApprovalsModel,
  callName,
  decisionWords,
  formatDuration,
  hasNoArguments,
  howWithRule,
  originWords,
  outcomeWords,
  prettyArguments,
  rejectToolRule,
  sameRule,
  SHELL_SERVER,
  SHELL_TOOL,
  timeAgo,
  describeRule,
  type PendingItem,
} from '../model/approvals';
import { argumentFields, callSiteWords, changeHeadline, changeRows, clientWords, describeTool, grantScopeWords, grantWords, hintLabels, HINTS_NOTE, sortGrants } from '../model/callDetails';
import { describeTimeout } from '../model/settings';
import { clipEscaped, escapeUntrusted, escapeUntrustedLines } from '../model/untrusted';
import { h } from './dom';
import { RulesView } from './rulesView';
import { QuestionsView } from './questionForm';

export interface ApprovalsBackend {
  approvalsPending(): Promise<ApprovalRequest[]>;
  decideApproval(id: number, decision: ApprovalDecision): Promise<boolean>;
  decideAllPending(decision: ApprovalDecision, ids: number[]): Promise<number>;
  /** `false`: the person cancelled the native confirmation of an allow rule. */
  addApprovalRule(rule: Rule, decideId: number | null): Promise<boolean>;
  approvalRules(): Promise<ApprovalRules>;
  /** `false`: the person cancelled the native confirmation of rules that allow more. */
  setApprovalRules(rules: ApprovalRules): Promise<boolean>;
  /** Rejects when the backend has no grants: the panel then does not show them. */
  approvalGrants(): Promise<ApprovalGrant[]>;
  revokeGrant(id: number): Promise<boolean>;
  /** Which of the last audited calls a rule would have matched; rejects on a backend that cannot say. */
  ruleWouldMatch?(rule: Rule): Promise<AuditEntry[]>;
}

const defaultBackend: ApprovalsBackend = {
  approvalsPending: () => ipc.approvalsPending(),
  decideApproval: (id, decision) => ipc.decideApproval(id, decision),
  decideAllPending: (decision, ids) => ipc.decideAllPending(decision, ids),
  addApprovalRule: (rule, decideId) => ipc.addApprovalRule(rule, decideId),
  approvalRules: () => ipc.approvalRules(),
  setApprovalRules: (rules) => ipc.setApprovalRules(rules),
  approvalGrants: () => ipc.approvalGrants(),
  revokeGrant: (id) => ipc.revokeGrant(id),
  ruleWouldMatch: (rule) => ipc.ruleWouldMatch(rule),
};

/** The backend's words for `err`, escaped (they may quote a server's answer). */
function errorText(err: unknown): string {
  const e = ipc.toBackendError(err);
  return escapeUntrustedLines(e.message.trim() || ipc.describeError(e));
}

/** Characters of a `server.tool` name on a group button (the tooltip has it whole). */
const GROUP_NAME_SHOWN = 80;

const plural = (n: number, one: string, many: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** What a rule made from a request covers: the tool, or the request's arguments. */
export type RuleScope = 'allow-tool' | 'reject-tool' | 'allow-arguments';

interface CardActions {
  decide(id: number, decision: ApprovalDecision): void;
  always(request: ApprovalRequest, scope: RuleScope): void;
}

const isShell = (server: string, tool: string): boolean => server === SHELL_SERVER && tool === SHELL_TOOL;

/** The link that makes a rule of a call's arguments: "Always allow this command" for a shell command. */
function argumentsRuleButton(server: string, tool: string, extraClass: string): HTMLButtonElement {
  const name = callName(server, tool);
  const shell = isShell(server, tool);
  return h('button', {
    class: `link-button always-allow-args ${extraClass}`.trim(),
    type: 'button',
    text: shell ? 'Always allow this command' : 'Always allow calls with these arguments',
    title: shell
      ? 'Add a rule that allows exactly this shell command from now on'
      : `Add a rule that allows ${name} when each argument has the value it has here, and no other argument is given`,
  });
}

/** "rejected in 48 s unless you decide", or null when there is no timeout or it passed. */
export function timeLeftWords(askedAt: number, timeoutSecs: number | null, now: number): string | null {
  if (timeoutSecs === null) return null;
  const left = Math.ceil((askedAt + timeoutSecs * 1000 - now) / 1000);
  if (left <= 0) return null;
  return `rejected in ${describeTimeout(left)} unless you decide`;
}

/** One waiting request. */
class RequestCard {
  readonly element: HTMLLIElement;
  private full = false;
  private readonly args: HTMLElement | null;
  private readonly who: HTMLElement | null;
  private readonly showAll: HTMLButtonElement | null;
  private readonly asked: HTMLElement;
  private readonly note: HTMLElement;
  private readonly buttons: HTMLButtonElement[];
  private timeoutSecs: number | null = null;

  constructor(
    readonly id: number,
    private readonly request: ApprovalRequest,
    actions: CardActions,
    /** The approval timeout in force (s); null while unknown. */
    private readonly timeoutInForce: () => number | null,
  ) {
    const r = request;
    const name = callName(r.server, r.tool);
    this.asked = h('span', { class: 'approval-asked' });
    const details = r.details ?? {};
    const schema = details.tool?.input_schema;
    // Named fields when the server's schema is known (each with its description); JSON otherwise, as before.
    const fields = details.tool ? argumentFields(r.arguments, schema) : null;
    const pretty = prettyArguments(r.arguments);
    if (hasNoArguments(r.arguments)) {
      this.args = null;
      this.showAll = null;
    } else {
      const shortened = fields ? fields.fields.some((f) => f.shortened) : pretty.shortened;
      this.args = fields
        ? h('dl', { class: 'approval-fields', tabindex: 0, 'aria-label': `Arguments of ${name}` })
        : h('pre', { class: 'approval-args', tabindex: 0, 'aria-label': `Arguments of ${name}`, text: pretty.text });
      if (fields) this.renderFields(false);
      this.showAll = shortened ? h('button', { class: 'link-button show-all', type: 'button', 'aria-expanded': 'false', text: 'Show all' }) : null;
      this.showAll?.addEventListener('click', () => this.toggleFull());
    }
    // Who asks: an agent's MCP client (the call's origin says which cell otherwise).
    this.who = details.client ? h('p', { class: 'approval-who' }) : null;
    const site = callSiteWords(details.call_site);
    const whatItDoes = this.whatItDoes(name);
    const approve = h('button', { class: 'button approve', type: 'button', text: 'Approve', 'aria-label': `Approve ${name}` });
    approve.addEventListener('click', () => actions.decide(r.id, 'accept'));
    const reject = h('button', { class: 'button button-danger reject', type: 'button', text: 'Reject', 'aria-label': `Reject ${name}` });
    reject.addEventListener('click', () => actions.decide(r.id, 'reject'));
    const alwaysAllow = h('button', { class: 'link-button always-allow', type: 'button', text: 'Always allow this tool', title: `Add a rule that allows every call to ${name}, and approve this one` });
    alwaysAllow.addEventListener('click', () => actions.always(r, 'allow-tool'));
    const allowArgs = allowArgumentsRule(r.server, r.tool, r.arguments) ? argumentsRuleButton(r.server, r.tool, '') : null;
    if (allowArgs) {
      allowArgs.title += ', and approve this one';
      allowArgs.addEventListener('click', () => actions.always(r, 'allow-arguments'));
    }
    const alwaysReject = h('button', { class: 'link-button always-reject', type: 'button', text: 'Always reject this tool', title: `Add a rule that rejects every call to ${name}, and reject this one` });
    alwaysReject.addEventListener('click', () => actions.always(r, 'reject-tool'));
    this.buttons = [approve, reject, alwaysAllow, ...(allowArgs ? [allowArgs] : []), alwaysReject];
    this.note = h('p', { class: 'approval-note', role: 'status', hidden: true });
    const description = r.server_description?.trim() ? escapeUntrusted(r.server_description.trim()) : '';
    const descriptionShown = clipEscaped(description, 120);
    this.element = h(
      'li',
      { class: 'approval-request', tabindex: -1, 'aria-label': `${name} wants to run`, 'data-request-id': r.id, 'data-server': r.server, 'data-tool': r.tool, 'data-state': 'waiting' },
      h('p', { class: 'approval-title' }, h('strong', { class: 'call-name', text: name }), ` wants to run — ${originWords(r.origin)}`),
      h('p', { class: 'approval-meta' }, this.asked, description ? h('span', { class: 'approval-server', title: clipEscaped(description, 600), text: ` · ${descriptionShown}` }) : null),
      this.who,
      site ? h('p', { class: 'approval-site' }, h('span', { class: 'approval-label', text: 'Calling line: ' }), h('code', { class: 'approval-site-code', text: site })) : null,
      details.change ? changeBox(details.change) : null,
      whatItDoes,
      this.args ? h('div', { class: 'approval-args-label', text: 'With these arguments:' }) : h('div', { class: 'approval-args-label', text: 'Without arguments.' }),
      this.args,
      this.showAll,
      h('div', { class: 'button-row approval-actions' }, approve, reject),
      h('div', { class: 'approval-always' }, allowArgs, alwaysAllow, alwaysReject),
      this.note,
    );
  }

  update(item: PendingItem, now: number): void {
    this.element.dataset.state = item.state;
    const off = item.state !== 'waiting';
    for (const b of this.buttons) b.disabled = off;
    const note = item.state === 'withdrawn' ? `Withdrawn: ${item.note ?? 'it no longer waits'}` : item.state === 'deciding' ? 'Sending your decision…' : item.note;
    // A withdrawal's reason comes from the backend, which may quote the call.
    this.note.textContent = note ? escapeUntrustedLines(note) : '';
    this.note.hidden = !note;
    this.tick(now);
  }

  tick(now: number): void {
    // A request waits the timeout in force when it was asked (the backend says until when; an
    // older backend does not, and then the setting read now is the best guess).
    const deadline = this.request.deadline;
    this.timeoutSecs ??= deadline !== undefined ? (deadline - this.request.asked_at) / 1000 : this.timeoutInForce();
    const left = this.element.dataset.state === 'withdrawn' ? null : timeLeftWords(this.request.asked_at, this.timeoutSecs, now);
    const text = `Asked ${timeAgo(this.request.asked_at, now)}${left ? ` · ${left}` : ''}`;
    if (this.asked.textContent !== text) this.asked.textContent = text;
    const client = this.request.details?.client;
    if (this.who && client) {
      const who = `Asked by ${clientWords(client, now)}`;
      if (this.who.textContent !== who) this.who.textContent = who;
    }
  }

  /** The tool's description (first lines; "More" for the rest) and the server's hints, with the note that they are claims. */
  private whatItDoes(name: string): HTMLElement | null {
    const tool = this.request.details?.tool;
    if (!tool) return null;
    const text = describeTool(tool.description);
    const labels = hintLabels(tool.hints);
    if (!text && labels.length === 0) return null;
    let description: HTMLElement | null = null;
    let more: HTMLButtonElement | null = null;
    if (text) {
      description = h('p', { class: 'approval-description', text: text.short });
      if (text.full !== null) {
        const full = text.full;
        more = h('button', { class: 'link-button description-more', type: 'button', 'aria-expanded': 'false', text: 'More' });
        let open = false;
        more.addEventListener('click', () => {
          open = !open;
          if (description) description.textContent = open ? full : text.short;
          if (more) {
            more.textContent = open ? 'Less' : 'More';
            more.setAttribute('aria-expanded', String(open));
          }
        });
      }
    }
    const hints = labels.length
      ? h(
          'div',
          { class: 'approval-hints' },
          h('span', { class: 'approval-label', text: 'The server says: ' }),
          ...labels.map((l) => h('span', { class: 'hint-label', 'data-hint': l.key, 'data-tone': l.tone, text: l.text })),
          h('p', { class: 'approval-hints-note', text: HINTS_NOTE }),
        )
      : null;
    return h('div', { class: 'approval-what', 'aria-label': `What ${name} does, as its server describes it` }, h('div', { class: 'approval-label', text: 'What it does, as the server describes it:' }), description, more, hints);
  }

  /** The arguments as named fields, each with the schema's description of it. */
  private renderFields(full: boolean): void {
    const fields = argumentFields(this.request.arguments, this.request.details?.tool?.input_schema, full);
    if (!fields || !this.args) return;
    const children: HTMLElement[] = [];
    for (const f of fields.fields) {
      children.push(h('dt', { class: 'approval-field-name' }, h('code', { text: f.name }), f.description ? h('span', { class: 'approval-field-desc', text: ` — ${f.description}` }) : null));
      children.push(h('dd', { class: 'approval-field-value' }, h('pre', { text: f.value })));
    }
    if (fields.more > 0) children.push(h('dt', { class: 'approval-field-more', text: `… and ${fields.more.toLocaleString('en-US')} more arguments (Show all lists them as JSON)` }));
    this.args.replaceChildren(...children);
  }

  private toggleFull(): void {
    if (!this.args || !this.showAll) return;
    this.full = !this.full;
    if (this.args instanceof HTMLPreElement) this.args.textContent = prettyArguments(this.request.arguments, this.full).text;
    else this.renderFields(this.full);
    this.showAll.textContent = this.full ? 'Show less' : 'Show all';
    this.showAll.setAttribute('aria-expanded', String(this.full));
  }
}

/** "This tool changed since you accepted it", with the accepted definition and the one listed now side by side. */
function changeBox(change: DefinitionChange): HTMLElement {
  const rows = changeRows(change);
  return h(
    'div',
    { class: 'approval-change', role: 'note' },
    h('p', { class: 'approval-change-title', text: changeHeadline(change) }),
    h('p', { class: 'approval-change-hint', text: 'Rules for it are suspended until you accept the new definition. Compare before you approve.' }),
    h(
      'div',
      { class: 'approval-change-scroll', tabindex: 0, 'aria-label': 'The definition you accepted and the one the server lists now' },
      h(
      'table',
      { class: 'approval-change-table' },
      h('thead', {}, h('tr', {}, h('th', { text: '' }), h('th', { scope: 'col', text: 'When you accepted it' }), h('th', { scope: 'col', text: 'Now' }))),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h('tr', { 'data-changed': String(r.changed), 'data-field': r.code ? 'code' : 'words' }, h('th', { scope: 'row', text: r.field }), h('td', {}, h('pre', { text: r.before })), h('td', {}, h('pre', { text: r.after }))),
        ),
      ),
      ),
    ),
  );
}

export class ApprovalsView {
  /** How long a withdrawn request stays, with its reason. */
  static WITHDRAWN_MS = 4000;

  readonly element: HTMLElement;
  readonly rules: RulesView;
  private readonly cards = new Map<number, RequestCard>();
  private readonly heading: HTMLElement;
  private readonly countEl: HTMLElement;
  private readonly hint: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly empty: HTMLElement;
  private readonly groupBar: HTMLElement;
  private groupKey = '';
  private readonly status: HTMLElement;
  private readonly recentList: HTMLOListElement;
  private readonly recentEmpty: HTMLElement;
  private shownRecent: readonly ToolCallEvent[] | null = null;
  private visible = false;
  private ticker: ReturnType<typeof setInterval> | null = null;
  private statusTimer: ReturnType<typeof setTimeout> | null = null;
  /** The approval timeout in force (s); null while unknown. */
  private timeoutSecs: number | null = null;
  private readonly timeoutEl: HTMLElement;
  private readonly timeoutHint: HTMLElement;
  /** Recent calls a rule was made from here (by request id): their link says so. */
  private readonly ruled = new Map<number, string>();
  private readonly grantsSection: HTMLElement;
  private readonly grantsList: HTMLUListElement;
  private grants: ApprovalGrant[] = [];
  /** False once the backend said it has no grants (an older backend): the section stays hidden. */
  private grantsAvailable = true;
  private grantsToken = 0;
  /** Servers' questions that belong to no cell of this notebook (an agent's call, a call ipybox cannot tell). */
  private readonly questions = new QuestionsView('approval-questions');
  private waitingQuestions: ServerQuestion[] = [];

  constructor(
    private readonly model: ApprovalsModel,
    private readonly backend: ApprovalsBackend = defaultBackend,
    /** Open the app's settings (the approval timeout). */
    private readonly openSettings: (() => void) | null = null,
  ) {
    this.countEl = h('span', { class: 'panel-count' });
    this.heading = h('h3', { id: 'pending-heading', class: 'panel-heading', tabindex: -1 }, h('span', { class: 'panel-heading-text', text: 'Waiting for your decision' }), this.countEl);
    this.timeoutEl = h('span', { class: 'approval-timeout-words' });
    const change = openSettings ? h('button', { id: 'change-approval-timeout', class: 'link-button', type: 'button', text: 'Change', title: 'Change the approval timeout in the settings' }) : null;
    change?.addEventListener('click', () => this.openSettings?.());
    this.timeoutHint = h('span', { id: 'approval-timeout-hint', class: 'approval-timeout-hint', hidden: true }, ' ', this.timeoutEl, ' ', change);
    this.hint = h('p', { class: 'panel-hint' }, 'Code in this notebook wants to use these tools. Nothing runs until you decide.', this.timeoutHint);
    this.groupBar = h('div', { id: 'approval-group-actions', class: 'group-actions', hidden: true });
    this.list = h('ol', { id: 'approval-list', class: 'approval-list', 'aria-labelledby': 'pending-heading' });
    this.empty = h('p', { id: 'approvals-empty', class: 'panel-empty', text: 'Nothing is waiting. When code in the notebook wants to use a tool, it shows up here.' });
    this.status = h('div', { id: 'approvals-status', class: 'panel-status', role: 'status', 'aria-live': 'polite' });
    this.recentList = h('ol', { id: 'recent-calls', class: 'recent-calls', 'aria-labelledby': 'recent-heading' });
    this.recentEmpty = h('p', { class: 'panel-empty', text: 'No tool calls yet in this session.' });
    this.rules = new RulesView(backend);
    this.grantsList = h('ul', { id: 'approval-grants', class: 'grant-list', 'aria-labelledby': 'grants-heading' });
    this.grantsSection = h(
      'section',
      { id: 'session-grants', class: 'panel-section', 'aria-labelledby': 'grants-heading', hidden: true },
      h('h3', { id: 'grants-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'Allowed for this session' })),
      h('p', { class: 'panel-hint', text: 'These tools run without asking until the kernel restarts or the agent’s session ends. Revoke one to be asked again.' }),
      this.grantsList,
    );
    this.element = h(
      'div',
      { class: 'approvals' },
      this.questions.element,
      h('section', { id: 'pending-approvals', class: 'panel-section', 'aria-labelledby': 'pending-heading' }, this.heading, this.hint, this.groupBar, this.list, this.empty, this.status),
      this.grantsSection,
      h(
        'section',
        { id: 'recent-decisions', class: 'panel-section', 'aria-labelledby': 'recent-heading' },
        h('h3', { id: 'recent-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'Recent decisions' })),
        this.recentList,
        this.recentEmpty,
      ),
      this.rules.element,
    );
    model.subscribe(() => this.render());
    this.render();
  }

  /** The tab is shown: catch up with the backend, keep the times fresh. */
  onShow(): void {
    this.visible = true;
    void this.syncPending();
    void this.refreshGrants();
    void this.rules.refresh();
    this.syncTicker();
    this.tick();
  }

  onHide(): void {
    this.visible = false;
    this.syncTicker();
  }

  /** Another workspace (or session): its pending requests and rules. */
  refresh(): void {
    void this.syncPending();
    void this.refreshGrants();
    if (this.visible) void this.rules.refresh();
  }

  /** Ask the backend which requests wait (those made before the UI listened, or missed). */
  async syncPending(): Promise<void> {
    const token = this.model.beginSync();
    try {
      this.model.sync(await this.backend.approvalsPending(), token);
    } catch {
      // The events keep the list; a failed catch-up changes nothing.
    }
  }

  /** Ask the backend for the grants in force (on showing, and on its `approval-grants` event). */
  async refreshGrants(): Promise<void> {
    if (!this.grantsAvailable) return;
    const token = ++this.grantsToken;
    try {
      const grants = sortGrants(await this.backend.approvalGrants());
      if (token !== this.grantsToken) return;
      this.grants = grants;
    } catch {
      // A backend without grants: the section is not shown rather than shown broken.
      this.grantsAvailable = false;
      this.grants = [];
    }
    this.renderGrants();
  }

  private renderGrants(): void {
    const now = Date.now();
    this.grantsSection.hidden = this.grants.length === 0;
    this.grantsList.replaceChildren(
      ...this.grants.map((g) => {
        const revoke = h('button', { class: 'link-button grant-revoke', type: 'button', text: 'Revoke', 'aria-label': `Revoke: ${grantWords(g)}` });
        revoke.addEventListener('click', () => void this.revoke(g, revoke));
        return h(
          'li',
          { class: 'grant', 'data-grant-id': g.id, 'data-scope': g.scope },
          h('div', { class: 'grant-head' }, h('span', { class: 'grant-words', text: grantWords(g) }), revoke),
          h('div', { class: 'grant-scope', text: grantScopeWords(g, now) }),
        );
      }),
    );
  }

  private async revoke(grant: ApprovalGrant, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await this.backend.revokeGrant(grant.id);
      this.grants = this.grants.filter((g) => g.id !== grant.id);
      this.renderGrants();
      this.say(`${callName(grant.server, grant.tool)} asks again from now on.`);
    } catch (err) {
      button.disabled = false;
      this.say(`The grant could not be revoked: ${errorText(err)}`);
    }
    void this.refreshGrants();
  }

  /** The approval timeout in force (null: unknown): the hint says it, and each request asked from now on counts down to it. */
  setApprovalTimeout(secs: number | null): void {
    this.timeoutSecs = secs;
    this.timeoutHint.hidden = secs === null;
    this.timeoutEl.textContent = secs === null ? '' : `A call nobody decides within ${describeTimeout(secs)} is rejected.`;
    this.tick();
  }

  /** A request was withdrawn: it shows why for a moment, then leaves. */
  /** A server's question no cell shows: its form heads the panel until it ends. */
  showQuestion(question: ServerQuestion): void {
    this.waitingQuestions = [...this.waitingQuestions.filter((q) => q.id !== question.id), question];
    this.questions.sync(this.waitingQuestions);
  }

  endQuestion(id: number): void {
    this.waitingQuestions = this.waitingQuestions.filter((q) => q.id !== id);
    this.questions.sync(this.waitingQuestions);
  }

  withdraw(id: number, reason: string): void {
    if (!this.model.withdraw(id, reason)) return;
    setTimeout(() => this.model.remove(id), ApprovalsView.WITHDRAWN_MS);
  }

  // ---- rendering

  private render(): void {
    const now = Date.now();
    const items = this.model.pending;
    const waiting = this.model.waitingCount;
    // Cards: remove the gone, add the new, keep the rest (and their "Show all" state) in place.
    const ids = new Set(items.map((i) => i.request.id));
    for (const [id, card] of this.cards) {
      if (!ids.has(id)) {
        card.element.remove();
        this.cards.delete(id);
      }
    }
    items.forEach((item, i) => {
      let card = this.cards.get(item.request.id);
      if (!card) {
        card = new RequestCard(item.request.id, item.request, { decide: (id, d) => void this.decide(id, d), always: (r, scope) => void this.always(r, scope) }, () => this.timeoutSecs);
        this.cards.set(item.request.id, card);
      }
      card.update(item, now);
      const at = this.list.children[i];
      if (at !== card.element) this.list.insertBefore(card.element, at ?? null);
    });
    this.countEl.textContent = waiting > 0 ? String(waiting) : '';
    this.list.hidden = items.length === 0;
    this.empty.hidden = items.length > 0;
    this.hint.hidden = waiting === 0;
    this.renderGroups(waiting);
    this.renderRecent();
    this.syncTicker();
  }

  /** Was the keyboard focus on these requests or group buttons (before deciding them)? */
  private focusInRequests(): boolean {
    const a = document.activeElement;
    return !!a && (this.list.contains(a) || this.groupBar.contains(a));
  }

  /**
   * The focused button was disabled or removed with its request: the focus goes on to the next
   * waiting request (the card, not a button, so a second Enter decides nothing), or the heading.
   * Not if the person went elsewhere meanwhile.
   */
  private restoreFocus(hadFocus: boolean): void {
    if (!hadFocus) return;
    const a = document.activeElement;
    const lost = !a || a === document.body || (a instanceof HTMLButtonElement && a.disabled) || !a.isConnected;
    if (!lost) return;
    const next = [...this.cards.values()].find((c) => c.element.dataset.state === 'waiting');
    (next?.element ?? this.heading).focus();
  }

  private renderGroups(waiting: number): void {
    const groups = waiting >= 2 ? this.model.groups() : [];
    const cellGroups = waiting >= 2 ? this.model.cellGroups() : [];
    const key = JSON.stringify([waiting, groups, cellGroups]);
    if (key === this.groupKey) return;
    this.groupKey = key;
    const buttons: HTMLButtonElement[] = groups.map((g) => {
      const name = callName(g.server, g.tool);
      // A long name would push the requests (and their buttons) down: the tooltip has it whole.
      const b = h('button', { class: 'button approve-group', type: 'button', 'data-server': g.server, 'data-tool': g.tool, text: `Approve all ${g.count} pending calls to ${clipEscaped(name, GROUP_NAME_SHOWN)}`, title: name });
      b.addEventListener('click', () => void this.decideGroup('accept', g.server, g.tool));
      return b;
    });
    // "The rest of this cell's calls": a run's waiting calls, when they are not already one tool's.
    const toolSets = new Set(groups.map((g) => JSON.stringify(this.model.waitingIds(g.server, g.tool))));
    for (const c of cellGroups) {
      if (toolSets.has(JSON.stringify(c.ids))) continue;
      const from = originWords(c.origin);
      const b = h('button', { class: 'button approve-cell', type: 'button', 'data-execution-id': c.executionId, text: `Approve all ${c.ids.length} pending calls ${clipEscaped(from, GROUP_NAME_SHOWN)}`, title: `Approve the ${c.ids.length} calls shown here that wait ${from}` });
      b.addEventListener('click', () => void this.decideIds('accept', c.ids, `Approved ${plural(c.ids.length, 'call', 'calls')} ${from}.`));
      buttons.push(b);
    }
    if (waiting >= 2) {
      const rejectAll = h('button', { id: 'reject-all-pending', class: 'button button-danger-outline', type: 'button', text: `Reject all ${waiting} pending` });
      rejectAll.addEventListener('click', () => void this.decideGroup('reject', null, null));
      buttons.push(rejectAll);
    }
    this.groupBar.replaceChildren(...buttons);
    this.groupBar.hidden = buttons.length === 0;
  }

  private renderRecent(force = false): void {
    const recent = this.model.recent;
    if (recent === this.shownRecent && !force) return;
    this.shownRecent = recent;
    for (const id of this.ruled.keys()) if (!recent.some((c) => c.id === id)) this.ruled.delete(id);
    this.recentEmpty.hidden = recent.length > 0;
    this.recentList.hidden = recent.length === 0;
    this.recentList.replaceChildren(
      ...recent.map((c) => {
        const how = c.decision === 'timed_out' && c.decided_by === 'timeout' ? 'nobody decided in time' : howWithRule(c.decided_by, c.decision, c.rule);
        const outcome = c.decision === 'approved' ? outcomeWords(c.outcome) : null;
        const duration = c.outcome ? formatDuration(c.duration_ms) : '';
        return h(
          'li',
          { class: 'recent-call', 'data-decision': c.decision, 'data-decided-by': c.decided_by },
          h('div', { class: 'recent-call-head' }, h('strong', { class: 'call-name', text: callName(c.server, c.tool) }), h('span', { class: 'decision-chip', 'data-decision': c.decision, text: decisionWords(c.decision) })),
          h(
            'div',
            { class: 'recent-call-detail' },
            h('span', { class: 'recent-how', text: how }),
            outcome ? h('span', { class: 'recent-outcome', 'data-outcome': c.outcome?.kind ?? 'none', text: ` · ${outcome}` }) : null,
            duration ? h('span', { class: 'recent-duration', text: ` · ${duration}` }) : null,
          ),
          this.recentRuleAction(c),
          c.decision === 'timed_out' ? this.dismissButton(c) : null,
        );
      }),
    );
  }

  /** A timeout the person has seen can leave the list. */
  private dismissButton(c: ToolCallEvent): HTMLButtonElement {
    const b = h('button', { class: 'link-button recent-dismiss', type: 'button', text: 'Dismiss', 'aria-label': `Dismiss the timed-out call to ${callName(c.server, c.tool)}` });
    b.addEventListener('click', () => this.model.dismissRecent(c.id));
    return b;
  }

  /** Under a recent call a rule did not decide: make a rule of its arguments (or what was made of it). */
  private recentRuleAction(c: ToolCallEvent): HTMLElement | null {
    const made = this.ruled.get(c.id);
    if (made) return h('div', { class: 'recent-rule-made', text: made });
    if (c.decided_by === 'rule' || !allowArgumentsRule(c.server, c.tool, c.arguments)) return null;
    const b = argumentsRuleButton(c.server, c.tool, 'recent-allow-args');
    b.addEventListener('click', () => void this.ruleFromRecent(c, b));
    return h('div', { class: 'recent-rule-action' }, b);
  }

  private syncTicker(): void {
    const want = this.visible && this.cards.size > 0;
    if (want && !this.ticker) this.ticker = setInterval(() => this.tick(), 1000);
    else if (!want && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  private tick(): void {
    const now = Date.now();
    for (const card of this.cards.values()) card.tick(now);
  }

  private say(text: string): void {
    this.status.textContent = escapeUntrustedLines(text);
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      this.status.textContent = '';
    }, 6000);
  }

  // ---- decisions

  private async decide(id: number, decision: ApprovalDecision): Promise<void> {
    const hadFocus = this.focusInRequests();
    this.model.setDeciding([id], true);
    try {
      const ok = await this.backend.decideApproval(id, decision);
      this.model.remove(id);
      if (!ok) this.say('That request was no longer waiting.');
    } catch (err) {
      this.model.setDeciding([id], false);
      this.model.setNote(id, `Your decision could not be sent: ${errorText(err)}`);
    }
    this.restoreFocus(hadFocus);
  }

  private async always(request: ApprovalRequest, scope: RuleScope): Promise<void> {
    const name = callName(request.server, request.tool);
    const rule =
      scope === 'allow-tool' ? allowToolRule(request.server, request.tool) : scope === 'reject-tool' ? rejectToolRule(request.server, request.tool) : allowArgumentsRule(request.server, request.tool, request.arguments);
    if (!rule) return;
    const hadFocus = this.focusInRequests();
    this.model.setDeciding([request.id], true);
    try {
      if (!(await this.backend.addApprovalRule(rule, request.id))) {
        this.model.setDeciding([request.id], false);
        this.say('No rule was added: the confirmation was cancelled. The call still waits.');
        this.restoreFocus(hadFocus);
        return;
      }
      this.model.remove(request.id);
      this.say(scope === 'allow-tool' ? `From now on ${name} runs without asking.` : scope === 'reject-tool' ? `From now on ${name} is always rejected.` : `Rule added: ${describeRule(rule)}.`);
    } catch (err) {
      this.model.setDeciding([request.id], false);
      this.model.setNote(request.id, `The rule could not be added: ${errorText(err)}`);
    }
    this.restoreFocus(hadFocus);
    void this.rules.refresh();
  }

  /** "Always allow calls with these arguments" under a call that already ended: a rule for the next ones. */
  private async ruleFromRecent(call: ToolCallEvent, button: HTMLButtonElement): Promise<void> {
    const rule = allowArgumentsRule(call.server, call.tool, call.arguments);
    if (!rule) return;
    button.disabled = true;
    try {
      // Saying so beats a second copy of the same rule.
      const current = await this.backend.approvalRules();
      if (current.rules.some((r) => sameRule(r, rule))) {
        this.ruled.set(call.id, 'A rule already allows these arguments.');
      } else {
        const added = await this.backend.addApprovalRule(rule, null);
        if (added) this.ruled.set(call.id, `Rule added: ${describeRule(rule)}.`);
        else this.say('No rule was added: the confirmation was cancelled.');
      }
    } catch (err) {
      this.ruled.delete(call.id);
      this.say(`The rule could not be added: ${errorText(err)}`);
    }
    this.renderRecent(true);
    void this.rules.refresh();
  }

  /** Decide exactly `ids` (the calls a batch button showed). */
  private async decideIds(decision: ApprovalDecision, ids: number[], done: string): Promise<void> {
    const hadFocus = this.focusInRequests();
    this.model.setDeciding(ids, true);
    try {
      const n = await this.backend.decideAllPending(decision, ids);
      this.say(decision === 'accept' && n === 0 ? 'Nothing was approved: the confirmation was cancelled.' : done);
    } catch (err) {
      this.say(`The decision could not be sent: ${errorText(err)}`);
    }
    await this.syncPending();
    this.model.setDeciding(ids.filter((id) => this.model.item(id)?.state === 'deciding'), false);
    this.restoreFocus(hadFocus);
  }

  private async decideGroup(decision: ApprovalDecision, server: string | null, tool: string | null): Promise<void> {
    const ids = this.model.waitingIds(server, tool);
    const hadFocus = this.focusInRequests();
    this.model.setDeciding(ids, true);
    try {
      // Exactly the calls the person saw: one queued after this render waits for its own
      // decision.
      const n = await this.backend.decideAllPending(decision, ids);
      if (decision === 'accept' && n === 0) this.say('Nothing was approved: the confirmation was cancelled.');
      else if (server !== null && tool !== null) this.say(`Approved ${plural(n, 'call', 'calls')} to ${callName(server, tool)}.`);
      else this.say(decision === 'accept' ? `Approved ${plural(n, 'pending call', 'pending calls')}.` : `Rejected ${plural(n, 'pending call', 'pending calls')}.`);
    } catch (err) {
      this.say(`The decision could not be sent: ${errorText(err)}`);
    }
    // The backend knows which ones it decided; whatever still waits gets its buttons back.
    await this.syncPending();
    this.model.setDeciding(ids.filter((id) => this.model.item(id)?.state === 'deciding'), false);
    this.restoreFocus(hadFocus);
  }
}

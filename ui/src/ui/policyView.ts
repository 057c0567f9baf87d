/**
 * The Sandbox tab: whether this workspace's kernel runs in the sandbox and under which policy
 * (Apply restarts it), and the policy editor — every srt setting that matters as lists and
 * switches with plain-words help, a summary in words and the resulting JSON, checked as you
 * type (quick checks here, the engine's `validate()` after a pause), saved atomically by the
 * backend, and following the file when it changes on disk. Also the toolbar badge that says at
 * a glance whether the kernel is sandboxed.
 */
import * as ipc from '../ipc';
import type { PolicyDocument, PolicySource, SandboxChoice, SandboxState } from '../ipc';
import {
  PRESETS,
  type PresetId,
  missingHidden,
  presetOf,
  verdictWords,
  type PolicyProblem,
  PolicyDraft,
  getList,
  hasErrors,
  localProblems,
  parsePolicy,
  problemsByField,
  relativeToWorkspace,
  setList,
  summarize,
} from '../model/policy';
import { type Base, changeCount, grantWarnings, nearestBase, presetBases } from '../model/policyChanges';
import { blockWords } from '../model/sandboxBlock';
import { h } from './dom';
import { PolicyForm } from './policyForm';
import { clipEscaped, escapeUntrusted } from '../model/untrusted';
import { serverLabel } from '../model/remote';
import { icon } from './icons';
import { assertNever } from '../util/assert';
import '../styles/policy.css';

export interface PolicyBackend {
  sandboxState(): Promise<SandboxState>;
  readPolicy(source: PolicySource): Promise<PolicyDocument>;
  checkPolicy(text: string): Promise<PolicyProblem[]>;
  savePolicy(text: string): Promise<PolicyDocument>;
  applySandbox(choice: SandboxChoice): Promise<SandboxState>;
  watchPolicy(): Promise<void>;
  onPolicyFile(handler: (change: { path: string; text: string | null }) => void): Promise<unknown>;
  pickPath(directory: boolean, defaultPath: string | undefined): Promise<string | null>;
  checkAccess(text: string, query: string): Promise<ipc.SandboxVerdict[]>;
}

const defaultBackend: PolicyBackend = {
  sandboxState: () => ipc.sandboxState(),
  readPolicy: (s) => ipc.readPolicy(s),
  checkPolicy: (t) => ipc.checkPolicy(t),
  savePolicy: (t) => ipc.savePolicy(t),
  applySandbox: (c) => ipc.applySandbox(c),
  watchPolicy: () => ipc.watchPolicy(),
  onPolicyFile: (fn) => ipc.onPolicyFile(fn),
  pickPath: (d, p) => ipc.pickPath(d, p),
  checkAccess: (t, q) => ipc.checkSandboxAccess(t, q),
};

/** The summary line each warned field belongs to. */
/** What is said beside a field. Policy entries are untrusted text: a message that names one is escaped. */
function fieldMessage(p: PolicyProblem): string {
  switch (p.severity) {
    case 'error':
      return p.message;
    case 'warning':
      return `Weakens the sandbox: ${p.message}`;
    case 'danger':
      return `Dangerous: ${clipEscaped(escapeUntrusted(p.message), 2000)}`;
    default:
      return assertNever(p.severity, 'problem severity');
  }
}

const TOPIC_OF: Record<string, string> = {
  'filesystem.disabled': 'write',
  'filesystem.allowWrite': 'write',
  'filesystem.denyRead': 'read',
  'filesystem.allowRead': 'read',
  'network.allowedDomains': 'network',
  'network.allowAllUnixSockets': 'sockets',
  'network.allowUnixSockets': 'sockets',
};

/** The engine checks this long after the last keystroke. */
const CHECK_DELAY_MS = 250;

function errorText(err: unknown): string {
  const e = ipc.toBackendError(err);
  return e.message.trim() || ipc.describeError(e);
}

function sourceKey(s: PolicySource): string {
  return s.kind === 'workspace' ? 'workspace' : `profile:${s.name}`;
}

function sourceOf(key: string): PolicySource {
  return key.startsWith('profile:') ? { kind: 'profile', name: key.slice('profile:'.length) } : { kind: 'workspace' };
}

export class PolicyView {
  readonly element: HTMLElement;
  /** A shield beside the kernel status (green: sandboxed, amber: not); opens the tab. */
  readonly badge: HTMLButtonElement;
  /** "Sandboxed: POLICY" / "Not sandboxed", for the status bar; opens the tab. */
  readonly statusItem: HTMLButtonElement;
  private readonly statusText: HTMLElement;
  private state: SandboxState | null = null;
  private doc: PolicyDocument | null = null;
  private draft: PolicyDraft | null = null;
  private engineProblems: PolicyProblem[] = [];
  private checkTimer: ReturnType<typeof setTimeout> | null = null;
  private checkSeq = 0;
  private busy = false;
  private watching = false;
  /** The file on disk is not a policy (malformed JSON): shown, not edited, so Save cannot replace what could not be read. */
  private unreadable = false;

  private readonly statusLine: HTMLElement;
  private readonly cliNote: HTMLElement;
  private readonly sandboxToggle: HTMLInputElement;
  private readonly sourceSelect: HTMLSelectElement;
  private readonly applyButton: HTMLButtonElement;
  private readonly applyError: HTMLElement;
  private readonly applyStatus: HTMLElement;
  private readonly editorTitle: HTMLElement;
  private readonly readOnlyNote: HTMLElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly revertButton: HTMLButtonElement;
  private readonly saveAsButton: HTMLButtonElement;
  private readonly saveError: HTMLElement;
  private readonly saveStatus: HTMLElement;
  private readonly conflict: HTMLElement;
  private readonly conflictText: HTMLElement;
  private readonly loadTheirsButton: HTMLButtonElement;
  private readonly summaryList: HTMLUListElement;
  private readonly jsonView: HTMLElement;
  private readonly textError: HTMLElement;
  private readonly policyForm = new PolicyForm({ edit: (fn, rerender) => this.edit(fn, rerender), pick: (directory) => this.pick(directory) });
  private readonly changesLine: HTMLElement;
  private readonly changesText: HTMLElement;
  private readonly resetAllButton: HTMLButtonElement;
  private readonly warningsList: HTMLUListElement;
  private readonly saveLaterButton: HTMLButtonElement;
  /** The presets, parsed: what the policy is compared with. */
  private bases: Base[] = [];
  private base: Base | null = null;
  private readonly presetRadios = new Map<PresetId, HTMLInputElement>();
  private readonly presetGroup: HTMLElement;
  private readonly stricter: HTMLElement;
  private readonly stricterText: HTMLElement;
  private readonly checkInput: HTMLInputElement;
  private readonly checkResult: HTMLUListElement;
  /** What the sandbox blocked lately, newest first. */
  private readonly recentBlocks = h('ul', { class: 'recent-blocks', 'aria-label': 'Recently blocked' }, h('li', { class: 'panel-hint', text: 'Nothing blocked yet in this session.' }));
  private static readonly RECENT_BLOCKS = 10;
  /** The presets' texts (shipped profiles), read once. */
  private presets = new Map<string, string>();

  constructor(
    private readonly openTab: () => void = () => undefined,
    /** What the kernel runs under changed (null: not sandboxed). */
    private readonly onRunning: (running: string | null) => void = () => undefined,
    private readonly backend: PolicyBackend = defaultBackend,
  ) {
    // The shield, and the word "Sandbox" where the toolbar has room (1280 px and wider); the
    // state in words is in the status bar and the tooltip.
    this.badge = h('button', { id: 'sandbox-badge', class: 'sandbox-badge', type: 'button', title: 'Sandbox policy', 'aria-label': 'Sandbox: unknown. Open the sandbox policy' }, icon('shield'), h('span', { class: 'sandbox-badge-text', text: 'Sandbox' }));
    this.statusText = h('span', { text: '' });
    this.statusItem = h('button', { id: 'sandbox-policy-status', class: 'status-item sandbox-status', type: 'button', title: 'Sandbox policy', 'aria-label': 'Sandbox: unknown. Open the sandbox policy' }, icon('shield'), this.statusText);
    for (const b of [this.badge, this.statusItem]) {
      b.dataset.sandboxed = 'unknown';
      b.addEventListener('click', () => this.openTab());
    }

    // ---- the kernel's sandbox
    this.statusLine = h('p', { id: 'sandbox-running', class: 'policy-running', role: 'status', 'aria-live': 'polite' });
    this.cliNote = h('p', { class: 'panel-hint policy-cli', hidden: true });
    this.sandboxToggle = h('input', { id: 'sandbox-on', type: 'checkbox' });
    this.sandboxToggle.addEventListener('change', () => this.update());
    this.sourceSelect = h('select', { id: 'policy-source', class: 'policy-select', 'aria-describedby': 'policy-source-help' });
    this.sourceSelect.addEventListener('change', () => void this.openSource(sourceOf(this.sourceSelect.value)));
    this.applyButton = h('button', { id: 'apply-sandbox', class: 'button', type: 'button', 'aria-describedby': 'apply-note', text: 'Apply: restart the kernel' });
    this.applyButton.addEventListener('click', () => void this.apply());
    this.applyError = h('div', { id: 'apply-error', class: 'panel-error', role: 'alert', hidden: true });
    this.applyStatus = h('div', { id: 'apply-status', class: 'panel-status', role: 'status', 'aria-live': 'polite' });
    const kernelSection = h(
      'section',
      { class: 'panel-section', 'aria-labelledby': 'sandbox-heading' },
      h('h3', { id: 'sandbox-heading', class: 'panel-heading' }, h('span', { class: 'panel-heading-text', text: 'This workspace’s kernel' })),
      this.statusLine,
      this.cliNote,
      h('label', { class: 'policy-check', for: 'sandbox-on' }, this.sandboxToggle, h('span', { text: 'Run the kernel in the sandbox' })),
      h('div', { class: 'policy-source-row' }, h('label', { for: 'policy-source', class: 'field-label', text: 'Policy' }), this.sourceSelect),
      h('p', { id: 'policy-source-help', class: 'panel-hint', text: 'The workspace’s own policy is sandbox-config.json at its root; the others ship with ipybox and open read-only.' }),
      h('div', { class: 'button-row' }, this.applyButton),
      h('p', { id: 'apply-note', class: 'panel-hint policy-apply-note', text: 'Apply saves your edits, has the sandbox try the policy, then restarts the kernel under it: variables, imports and running cells are lost. A policy the sandbox refuses is reported here and the running kernel stays.' }),
      this.applyError,
      this.applyStatus,
    );

    // ---- the editor
    this.editorTitle = h('span', { class: 'panel-heading-text', text: 'Policy' });
    this.readOnlyNote = h('p', { id: 'policy-read-only', class: 'panel-hint policy-read-only', hidden: true });
    // One action: saved, then in force (the kernel restarts under it); saving alone is there
    // for later, said so.
    this.saveButton = h('button', { id: 'save-policy', class: 'button', type: 'button', text: 'Save' });
    this.saveButton.addEventListener('click', () => void (this.runsUnderDraft() ? this.apply(true) : this.save()));
    this.saveLaterButton = h('button', { id: 'save-policy-later', class: 'button button-secondary', type: 'button', text: 'Save without restarting', hidden: true });
    this.saveLaterButton.addEventListener('click', () => void this.save());
    this.revertButton = h('button', { id: 'revert-policy', class: 'button button-secondary', type: 'button', text: 'Revert' });
    this.revertButton.addEventListener('click', () => this.revert());
    this.saveAsButton = h('button', { id: 'save-as-workspace-policy', class: 'button', type: 'button', text: 'Save as the workspace’s policy', hidden: true });
    this.saveAsButton.addEventListener('click', () => void this.saveAsWorkspace());
    this.saveError = h('div', { id: 'save-policy-error', class: 'panel-error', role: 'alert', hidden: true });
    this.saveStatus = h('div', { id: 'save-policy-status', class: 'panel-status', role: 'status', 'aria-live': 'polite' });
    this.conflictText = h('span', { text: '' });
    this.loadTheirsButton = h('button', { id: 'policy-load-theirs', class: 'button', type: 'button', text: 'Load theirs' });
    this.loadTheirsButton.addEventListener('click', () => this.resolve('theirs'));
    const keepMine = h('button', { id: 'policy-keep-mine', class: 'button button-secondary', type: 'button', text: 'Keep mine' });
    keepMine.addEventListener('click', () => this.resolve('mine'));
    this.conflict = h('div', { id: 'policy-conflict', class: 'banner banner-warning policy-conflict', role: 'alert', hidden: true }, this.conflictText, h('div', { class: 'button-row' }, this.loadTheirsButton, keepMine));
    this.summaryList = h('ul', { id: 'policy-summary', class: 'policy-summary', 'aria-label': 'What this policy allows' });
    this.jsonView = h('pre', { id: 'policy-json', class: 'policy-json', tabindex: 0, 'aria-label': 'The policy file as it will be saved' });
    this.textError = h('div', { id: 'policy-text-error', class: 'panel-error', role: 'alert', hidden: true });
    this.changesText = h('span', { text: '' });
    this.resetAllButton = h('button', { id: 'policy-reset-all', class: 'button button-secondary', type: 'button', text: 'Reset' });
    this.resetAllButton.addEventListener('click', () => {
      const base = this.base;
      if (base) this.edit((d) => d.edit(base.policy), true);
    });
    this.changesLine = h('div', { id: 'policy-changes', class: 'policy-changes-line', role: 'status', hidden: true }, this.changesText, this.resetAllButton);
    this.warningsList = h('ul', { id: 'policy-warnings', class: 'policy-summary policy-warnings', 'aria-label': 'Grants worth a second look' });
    const presetItems = PRESETS.map((p) => {
      const id = `policy-preset-${p.id}`;
      const radio = h('input', { id, type: 'radio', name: 'policy-preset', value: p.id, 'aria-describedby': `${id}-help` });
      radio.addEventListener('change', () => {
        if (radio.checked) this.choosePreset(p.id);
      });
      this.presetRadios.set(p.id, radio);
      return h('div', { class: 'policy-preset' }, h('label', { class: 'policy-check', for: id }, radio, h('span', { text: p.label })), h('p', { id: `${id}-help`, class: 'panel-hint', text: p.help }));
    });
    this.presetGroup = h('fieldset', { id: 'policy-presets', class: 'policy-list policy-presets' }, h('legend', { class: 'policy-legend', text: 'What code may read' }), ...presetItems);
    this.stricterText = h('span', { text: '' });
    const hideToo = h('button', { id: 'policy-hide-too', class: 'button', type: 'button', text: 'Hide them too' });
    hideToo.addEventListener('click', () => this.hideMissing());
    this.stricter = h('div', { id: 'policy-stricter', class: 'banner banner-warning', role: 'status', hidden: true }, this.stricterText, h('div', { class: 'button-row' }, hideToo));
    this.checkInput = h('input', { id: 'policy-check-query', class: 'text-input', type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: '~/.ssh/id_rsa, data/out.csv or https://pypi.org', 'aria-label': 'A path or URL to check', 'aria-describedby': 'policy-check-help' });
    const checkButton = h('button', { id: 'policy-check-button', class: 'button button-secondary', type: 'button', text: 'Check' });
    this.checkResult = h('ul', { id: 'policy-check-result', class: 'policy-summary', 'aria-live': 'polite', 'aria-label': 'What the sandbox would do' });
    checkButton.addEventListener('click', () => void this.checkAccess());
    this.checkInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void this.checkAccess();
      }
    });
    const checkSection = h(
      'div',
      { class: 'policy-checker' },
      h('h4', { class: 'policy-subheading', text: 'Would this be allowed?' }),
      h('p', { id: 'policy-check-help', class: 'panel-hint', text: 'A path (read and write) or a URL, answered for the policy as edited here, with the rule that decides.' }),
      h('div', { class: 'policy-add-row' }, this.checkInput, checkButton),
      this.checkResult,
      h('h4', { class: 'policy-subheading', text: 'Recently blocked' }),
      this.recentBlocks,
    );
    const editorSection = h(
      'section',
      { class: 'panel-section', 'aria-labelledby': 'policy-heading' },
      h('h3', { id: 'policy-heading', class: 'panel-heading' }, this.editorTitle),
      this.readOnlyNote,
      this.conflict,
      this.textError,
      this.stricter,
      this.presetGroup,
      this.changesLine,
      h(
        'div',
        { class: 'policy-overview' },
        h('div', { class: 'policy-words' }, h('h4', { class: 'policy-subheading', text: 'In words' }), this.summaryList, this.warningsList),
        h('div', { class: 'policy-file' }, h('h4', { class: 'policy-subheading', text: 'The file' }), this.jsonView),
      ),
      checkSection,
      this.policyForm.element,
      h('div', { class: 'button-row policy-save-row' }, this.saveButton, this.saveLaterButton, this.revertButton, this.saveAsButton),
      this.saveError,
      this.saveStatus,
    );
    this.element = h('div', { id: 'policy-view', class: 'policy-view' }, kernelSection, editorSection);
  }

  /** Read the state (the badge needs it before the tab is ever shown); follow the file. */
  async init(): Promise<void> {
    await this.refreshState();
    if (!this.watching) {
      this.watching = true;
      await this.backend.onPolicyFile((change) => this.onFileChange(change.text)).catch(() => undefined);
      // A new session (a workspace opened, Apply, a restart) may run under another policy.
      await ipc
        .onSessionEvent((e) => {
          if (e.type === 'started' || e.type === 'stopped') void this.refreshState();
          if (e.type === 'sandbox_blocked') this.noteBlock(e.block);
        })
        .catch(() => undefined);
    }
  }

  /** A cell was blocked: listed newest first (paths escaped), the last few kept. */
  private noteBlock(block: ipc.SandboxBlock): void {
    const { verb } = blockWords(block.access);
    const why = block.rule ?? block.reason;
    const item = h('li', { class: 'recent-block' }, `${verb} `, h('code', {}, clipEscaped(escapeUntrusted(block.path), 300)), ` — ${clipEscaped(escapeUntrusted(why), 200)}`);
    this.recentBlocks.querySelector('.panel-hint')?.remove();
    this.recentBlocks.prepend(item);
    while (this.recentBlocks.children.length > PolicyView.RECENT_BLOCKS) this.recentBlocks.lastElementChild?.remove();
  }

  /** The kernel restarted (a workspace opened, Apply): read what it runs under. */
  async refreshState(): Promise<void> {
    try {
      this.showState(await this.backend.sandboxState());
    } catch {
      // No session yet: the badge stays "unknown".
    }
  }

  onShow(): void {
    void this.refreshState().then(async () => {
      await this.backend.watchPolicy().catch(() => undefined);
      if (!this.doc && this.state) await this.openSource(this.state.choice.policy);
    });
  }

  onHide(): void {}

  // ---- state

  private showState(state: SandboxState): void {
    // Another workspace: its own choice and policy.
    const first = this.state === null || this.state.workspacePolicy !== state.workspacePolicy;
    if (first && this.state !== null) {
      this.doc = null;
      this.draft = null;
      this.policyForm.clear();
      if (this.element.isConnected && this.element.offsetParent !== null) queueMicrotask(() => this.onShow());
    }
    this.state = state;
    const running = state.running;
    const remote = state.remote ? serverLabel(state.remote) : null;
    for (const b of [this.badge, this.statusItem]) {
      b.dataset.sandboxed = remote ? 'remote' : running ? 'yes' : 'no';
      b.title = remote ? `The kernel runs on ${remote}` : running ? `The kernel is sandboxed under ${running}` : 'The kernel is not sandboxed';
      b.setAttribute(
        'aria-label',
        remote
          ? `The kernel runs on the server ${remote}. Open the sandbox policy`
          : running
            ? `The kernel is sandboxed under ${running}. Open the sandbox policy`
            : 'The kernel is not sandboxed. Open the sandbox policy',
      );
    }
    this.statusText.textContent = remote ? `On server: ${remote}` : running ? `Sandboxed: ${running}` : 'Not sandboxed';
    this.onRunning(running);
    this.statusLine.dataset.sandboxed = remote ? 'remote' : running ? 'yes' : 'no';
    this.statusLine.textContent = remote
      ? `The kernel runs on the server ${remote}, under that server’s own isolation: ipybox’s sandbox is for kernels on this computer. Choose “This computer” in Settings to sandbox it here.`
      : running
        ? `The kernel runs in the sandbox under ${running}.`
        : 'The kernel is not sandboxed: its code can do what you can.';
    this.cliNote.hidden = state.commandLine === null;
    this.cliNote.textContent = state.commandLine ? `This run’s sandbox was set on the command line (${state.commandLine}); what you choose here applies the next time ipybox opens this workspace without it.` : '';
    this.applyButton.disabled = state.commandLine !== null || remote !== null || this.busy;
    this.sandboxToggle.disabled = remote !== null;
    const current = this.sourceSelect.value;
    this.sourceSelect.replaceChildren(
      h('option', { value: 'workspace', text: `This workspace’s policy (sandbox-config.json${state.workspacePolicyExists ? '' : ', not created yet'})` }),
      ...state.profiles.map((p) => h('option', { value: `profile:${p.name}`, text: `${p.name}: ${p.purpose}` })),
    );
    if (first) {
      this.sandboxToggle.checked = state.choice.sandbox;
      this.sourceSelect.value = sourceKey(state.choice.policy);
    } else {
      this.sourceSelect.value = current || sourceKey(state.choice.policy);
    }
  }

  // ---- opening and editing

  private async openSource(source: PolicySource): Promise<void> {
    if (this.draft?.dirty && this.doc && !this.doc.readOnly && sourceKey(source) !== sourceKey(this.doc.source)) {
      const leave = await ipc.confirmDialog('The workspace’s policy has unsaved edits. Open another policy and drop them?', 'Unsaved policy', 'Drop edits').catch(() => false);
      if (!leave) {
        this.sourceSelect.value = sourceKey(this.doc.source);
        return;
      }
    }
    try {
      this.show(await this.backend.readPolicy(source));
    } catch (err) {
      this.showSaveError(`The policy could not be opened: ${errorText(err)}`);
    }
  }

  private show(doc: PolicyDocument): void {
    if (this.presets.size === 0) void this.loadPresets();
    this.doc = doc;
    this.draft = new PolicyDraft(doc.text);
    this.engineProblems = doc.problems;
    this.sourceSelect.value = sourceKey(doc.source);
    this.conflict.hidden = true;
    this.saveError.hidden = true;
    this.editorTitle.textContent = doc.readOnly ? `Profile “${doc.source.kind === 'profile' ? doc.source.name : ''}” (read-only)` : 'sandbox-config.json';
    this.readOnlyNote.hidden = !doc.readOnly && doc.exists;
    this.readOnlyNote.textContent = doc.readOnly
      ? 'ipybox ships this profile; it cannot be changed. “Save as the workspace’s policy” copies it to sandbox-config.json, where you can edit it.'
      : 'This workspace has no sandbox-config.json yet: this is ipybox’s default policy. Saving creates the file.';
    const parsed = doc.problems.find((p) => p.field === '');
    this.unreadable = parsed !== undefined;
    this.textError.hidden = !parsed;
    this.textError.textContent = parsed ? `${parsed.message.replace(/\.$/, '')}. Fix sandbox-config.json in a text editor: the tab follows the file and shows it here as soon as it is a policy again. Nothing is changed meanwhile.` : '';
    this.renderForm();
    this.update();
  }

  private edit(fn: (d: PolicyDraft) => void, rerender: boolean): void {
    if (!this.draft || this.doc?.readOnly || this.unreadable) return;
    fn(this.draft);
    this.saveStatus.textContent = '';
    if (rerender) this.renderForm();
    this.update();
    this.scheduleCheck();
  }

  private renderForm(): void {
    const draft = this.draft;
    if (!draft) {
      this.policyForm.clear();
      return;
    }
    this.policyForm.render(draft.policy, (this.doc?.readOnly ?? true) || this.unreadable);
  }

  /** A picked path inside the workspace is written relative to it (as the policy reads it). */
  private async pick(directory: boolean): Promise<string | null> {
    const workspace = this.state?.workspacePolicy.replace(/\/sandbox-config\.json$/, '');
    let path: string | null;
    try {
      path = await this.backend.pickPath(directory, workspace);
    } catch (err) {
      this.showSaveError(`The picker could not open: ${errorText(err)}`);
      return null;
    }
    return path && relativeToWorkspace(path, workspace, directory);
  }

  /** The presets' texts, for telling which one the policy is. */
  private async loadPresets(): Promise<void> {
    const texts = new Map<string, string>();
    for (const p of PRESETS) {
      if (p.id === 'custom') continue;
      try {
        texts.set(p.id, (await this.backend.readPolicy({ kind: 'profile', name: p.id })).text);
      } catch {
        // Without it the preset is not offered; the lists still work.
      }
    }
    this.presets = texts;
    this.bases = presetBases(texts);
    this.update();
  }

  private choosePreset(id: PresetId): void {
    const text = this.presets.get(id);
    if (id === 'custom' || text === undefined) return;
    const parsed = parsePolicy(text);
    if (parsed.ok) this.edit((d) => d.edit(parsed.policy), true);
  }

  /** Offered, never done silently: the default's hidden places this policy still lets code read. */
  private hideMissing(): void {
    const missing = this.draft ? missingHidden(this.draft.policy, this.presets.get('kernel')) : [];
    if (missing.length === 0) return;
    this.edit((d) => d.edit(setList(d.policy, 'filesystem.denyRead', [...getList(d.policy, 'filesystem.denyRead'), ...missing])), true);
  }

  private async checkAccess(): Promise<void> {
    const query = this.checkInput.value.trim();
    if (!query || !this.draft) return;
    try {
      const verdicts = await this.backend.checkAccess(this.draft.text, query);
      this.checkResult.replaceChildren(...verdicts.map((v) => h('li', { class: `policy-line ${v.allowed ? '' : 'policy-warn'}`, text: escapeUntrusted(verdictWords(v)) })));
    } catch (err) {
      this.checkResult.replaceChildren(h('li', { class: 'policy-line policy-warn', text: `Cannot answer: ${errorText(err)}` }));
    }
  }

  /** Summary, JSON, messages and buttons after any change. */
  private update(): void {
    const draft = this.draft;
    const doc = this.doc;
    if (!draft || !doc) return;
    const preset = presetOf(draft.policy, this.presets);
    const editable = !doc.readOnly && !this.unreadable;
    for (const [id, radio] of this.presetRadios) {
      radio.checked = id === preset;
      radio.disabled = !editable || (id !== 'custom' && !this.presets.has(id));
    }
    const missing = doc.source.kind === 'workspace' && editable ? missingHidden(draft.policy, this.presets.get('kernel')) : [];
    this.stricter.hidden = missing.length === 0;
    this.stricterText.textContent = missing.length ? `ipybox’s default now also hides ${missing.length} place${missing.length === 1 ? '' : 's'} this policy still lets code read: ${missing.join(', ')}.` : '';
    // What differs from the preset it is nearest to: marked in the form, counted here.
    this.base = nearestBase(draft.policy, this.bases);
    const changes = this.base ? changeCount(draft.policy, this.base.policy) : 0;
    this.changesLine.hidden = !this.base || changes === 0 || doc.readOnly;
    this.changesText.textContent = this.base ? `${changes} change${changes === 1 ? '' : 's'} from “${this.base.label}”, marked below. ` : '';
    this.resetAllButton.textContent = this.base ? `Reset to “${this.base.label}”` : 'Reset';
    this.resetAllButton.disabled = !editable;
    this.policyForm.mark(draft.policy, doc.readOnly ? null : this.base);
    // Warnings only for the grants that matter, each saying what it lets code do; first, in
    // red, the entries the engine found open a place no grant may open (it knows this
    // computer's home, ipybox's data and the kernels' Python).
    const grants = grantWarnings(draft.policy);
    const dangers = this.engineProblems.filter((p) => p.severity === 'danger');
    const warned = new Set([...grants, ...dangers].map((g) => TOPIC_OF[g.field.replace(/\[\d+\]$/, '')]));
    this.warningsList.replaceChildren(
      ...dangers.map((d) => h('li', { class: 'policy-line policy-danger' }, h('span', { text: 'Dangerous: ' }), clipEscaped(escapeUntrusted(d.message), 2000))),
      ...grants.map((g) => h('li', { class: 'policy-line policy-warn' }, h('span', { class: 'visually-hidden', text: 'Warning: ' }), clipEscaped(escapeUntrusted(g.text), 2000))),
    );
    this.warningsList.hidden = grants.length + dangers.length === 0;
    this.summaryList.replaceChildren(
      ...summarize(draft.policy).map((line) => {
        const li = h('li', { class: `policy-line policy-${line.topic}`, text: line.text });
        if (warned.has(line.topic)) {
          li.classList.add('policy-warn');
          li.prepend(h('span', { class: 'visually-hidden', text: 'Warning: ' }));
        }
        return li;
      }),
    );
    this.jsonView.textContent = this.unreadable ? doc.text : draft.text;
    // The engine's errors and dangers; its warnings give way to the grants that matter.
    const engine = this.engineProblems.filter((p) => p.field !== '' && p.severity !== 'warning');
    const local = [...localProblems(draft.policy).filter((p) => p.severity === 'error'), ...grants.map((g): PolicyProblem => ({ field: g.field, message: g.text, severity: 'warning' }))];
    const problems = problemsByField(engine, local);
    for (const [field, { input, message }] of this.policyForm.fields) {
      const p = problems.get(field);
      message.hidden = !p;
      message.textContent = p ? fieldMessage(p) : '';
      message.classList.toggle('field-warning', p?.severity === 'warning');
      message.classList.toggle('field-danger', p?.severity === 'danger');
      input.setAttribute('aria-invalid', String(p?.severity === 'error'));
    }
    const dirty = draft.dirty || !doc.exists;
    const restarts = this.runsUnderDraft();
    this.saveButton.textContent = restarts ? 'Save and restart the kernel' : 'Save';
    this.saveLaterButton.hidden = doc.readOnly || !restarts;
    this.saveLaterButton.disabled = !dirty || hasErrors(problems.values()) || this.unreadable;
    this.saveButton.hidden = doc.readOnly;
    this.revertButton.hidden = doc.readOnly;
    this.saveAsButton.hidden = !doc.readOnly;
    this.saveButton.disabled = !dirty || hasErrors(problems.values()) || this.unreadable;
    this.revertButton.disabled = !draft.dirty;
  }

  /** The kernel is to run under the policy being edited: saving it means restarting it. */
  private runsUnderDraft(): boolean {
    return this.doc?.source.kind === 'workspace' && this.sandboxToggle.checked && sourceOf(this.sourceSelect.value).kind === 'workspace' && this.state?.commandLine === null && this.state?.remote === null;
  }

  private scheduleCheck(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => void this.check(), CHECK_DELAY_MS);
  }

  private async check(): Promise<void> {
    this.checkTimer = null;
    const draft = this.draft;
    if (!draft) return;
    const seq = ++this.checkSeq;
    try {
      const problems = await this.backend.checkPolicy(draft.text);
      if (seq !== this.checkSeq) return;
      this.engineProblems = problems;
      this.update();
    } catch {
      // The quick checks stay; the engine checks again on Save.
    }
  }

  // ---- saving

  private showSaveError(text: string): void {
    this.saveError.textContent = text;
    this.saveError.hidden = false;
  }

  private async save(): Promise<boolean> {
    const draft = this.draft;
    if (!draft || this.doc?.readOnly) return false;
    this.saveError.hidden = true;
    this.saveButton.disabled = true;
    try {
      const doc = await this.backend.savePolicy(draft.text);
      draft.saved(doc.text);
      this.doc = doc;
      this.engineProblems = doc.problems;
      this.conflict.hidden = true;
      this.readOnlyNote.hidden = true;
      this.saveStatus.textContent = this.runsUnderDraft() ? 'Saved. The kernel keeps the policy it started with until it restarts (Apply).' : 'Saved.';
      await this.refreshState();
      this.update();
      return true;
    } catch (err) {
      this.showSaveError(`Not saved: ${errorText(err)}`);
      this.update();
      return false;
    }
  }

  private revert(): void {
    if (!this.doc || !this.draft) return;
    this.draft = new PolicyDraft(this.draft.base);
    this.engineProblems = this.doc.problems;
    this.renderForm();
    this.update();
    this.scheduleCheck();
  }

  private async saveAsWorkspace(): Promise<void> {
    const draft = this.draft;
    if (!draft) return;
    if (this.state?.workspacePolicyExists) {
      const ok = await ipc.confirmDialog('This workspace already has a sandbox-config.json. Replace it with this profile?', 'Replace the workspace’s policy', 'Replace').catch(() => false);
      if (!ok) return;
    }
    try {
      const doc = await this.backend.savePolicy(draft.text);
      this.show(doc);
      await this.refreshState();
      this.saveStatus.textContent = 'Saved as sandbox-config.json. Apply restarts the kernel under it.';
    } catch (err) {
      this.showSaveError(`Not saved: ${errorText(err)}`);
    }
  }

  // ---- the file on disk

  private onFileChange(text: string | null): void {
    const draft = this.draft;
    if (!draft || !this.doc || this.doc.source.kind !== 'workspace') {
      void this.refreshState();
      return;
    }
    if (this.unreadable) {
      if (text !== null) {
        const parsed = parsePolicy(text);
        this.show({ ...this.doc, text, exists: true, problems: parsed.ok ? [] : [{ field: '', message: parsed.message, severity: 'error' }] });
        if (parsed.ok) this.scheduleCheck();
      }
      return;
    }
    const outcome = draft.external(text);
    switch (outcome) {
      case 'same':
        return;
      case 'removed':
        this.conflictText.textContent = 'sandbox-config.json was deleted outside ipybox. Save to write it again.';
        this.loadTheirsButton.hidden = true;
        this.conflict.hidden = false;
        this.doc = { ...this.doc, exists: false };
        void this.refreshState();
        this.update();
        return;
      case 'reloaded':
        this.doc = { ...this.doc, text: draft.base, exists: true };
        this.saveStatus.textContent = 'sandbox-config.json changed outside ipybox; this is what it says now.';
        this.renderForm();
        this.update();
        this.scheduleCheck();
        return;
      case 'conflict': {
        const readable = text !== null && (() => {
          try {
            JSON.parse(text);
            return true;
          } catch {
            return false;
          }
        })();
        this.conflictText.textContent = readable
          ? 'sandbox-config.json changed outside ipybox while you were editing it. Load what the file says now (your edits here are dropped), or keep your edits (saving replaces the other change)?'
          : 'sandbox-config.json changed outside ipybox and is not a valid policy now. Your edits here are kept; saving replaces it.';
        this.loadTheirsButton.hidden = !readable;
        this.conflict.hidden = false;
        this.update();
        return;
      }
    }
  }

  private resolve(which: 'mine' | 'theirs'): void {
    const draft = this.draft;
    if (!draft || !this.doc) return;
    if (which === 'theirs' && draft.loadTheirs()) {
      this.doc = { ...this.doc, text: draft.base, exists: true };
      this.renderForm();
      this.scheduleCheck();
    } else {
      draft.keepMine();
    }
    this.conflict.hidden = true;
    this.update();
    this.saveButton.focus();
  }

  // ---- apply

  /** `fromEditor`: "Save and restart the kernel" under the editor, which shows the outcome too. */
  private async apply(fromEditor = false): Promise<void> {
    if (this.busy) return;
    this.applyError.hidden = true;
    const tell = (ok: boolean, text: string): void => {
      if (!fromEditor) return;
      this.saveStatus.textContent = ok ? text : '';
      if (!ok) this.showSaveError(text);
    };
    const source = sourceOf(this.sourceSelect.value);
    if (source.kind === 'workspace' && this.doc?.source.kind === 'workspace' && this.draft && (this.draft.dirty || !this.doc.exists)) {
      if (!(await this.save())) {
        this.applyError.textContent = 'Not applied: the policy could not be saved (see below).';
        this.applyError.hidden = false;
        if (fromEditor) this.saveStatus.textContent = '';
        return;
      }
    }
    this.busy = true;
    this.applyButton.disabled = true;
    this.applyStatus.textContent = 'Trying the policy in the sandbox, then restarting the kernel…';
    tell(true, this.applyStatus.textContent);
    try {
      const state = await this.backend.applySandbox({ sandbox: this.sandboxToggle.checked, policy: source });
      this.showState(state);
      this.applyStatus.textContent = state.running ? `Applied: the kernel restarted in the sandbox under ${state.running}.` : 'Applied: the kernel restarted without the sandbox.';
      tell(true, fromEditor ? `Saved, and ${this.applyStatus.textContent.replace(/^Applied: /, '')}` : '');
    } catch (err) {
      this.applyStatus.textContent = '';
      const e = ipc.toBackendError(err);
      // KernelStartFailed: srt ran the policy but the kernel could not live under it; the
      // backend went back to the previous choice. Anything else: nothing was changed.
      const lead = e.code === 'KernelStartFailed' ? 'Not applied.' : 'Not applied — the kernel keeps running as before.';
      this.applyError.textContent = `${lead} ${errorText(err)}`;
      if (e.code === 'KernelStartFailed') void this.refreshState();
      this.applyError.hidden = false;
      tell(false, this.applyError.textContent);
    } finally {
      this.busy = false;
      this.applyButton.disabled = this.state?.commandLine !== null && this.state?.commandLine !== undefined;
    }
  }
}

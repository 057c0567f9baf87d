/**
 * Saving: Ctrl/Cmd+S, autosave 2 s after the last change (and at least every 30 s while changes
 * keep coming), never two saves at once, the dirty marker in the window title and on <body>.
 */
import * as ipc from '../ipc';
import { serializeNotebook } from '../model/ipynb';
import type { Notebook } from '../model/notebook';
import { baseName } from '../model/text';
import { windowTitle } from '../model/callDetails';

export interface SaveBackend {
  /** `trusted`: every output in `content` may render (see `Notebook.contentTrusted`). */
  save(path: string, content: string, trusted: boolean): Promise<void>;
  setTitle(title: string): Promise<void>;
}

const ipcBackend: SaveBackend = {
  save: ipc.saveNotebook,
  setTitle: ipc.setTitle,
};

export type SaveState = 'clean' | 'new' | 'dirty' | 'saving' | 'saved' | 'error' | 'blocked';

export interface SaveStatus {
  state: SaveState;
  text: string;
}

export class SaveController {
  private notebook: Notebook | null = null;
  private path = '';
  private savedVersion = 0;
  private exists = true;
  private inFlight: Promise<boolean> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private firstUnsavedAt: number | null = null;
  private lastChangeAt = 0;
  private lastDirty: boolean | null = null;
  private lastTitle = '';
  private waiting = 0;
  private blockedReason: string | null = null;
  private paused = false;
  private status: SaveStatus = { state: 'clean', text: '' };
  private listeners = new Set<(s: SaveStatus) => void>();

  constructor(
    private readonly backend: SaveBackend = ipcBackend,
    private readonly autosaveMs = 2000,
    private readonly maxWaitMs = 30000,
  ) {}

  subscribe(listener: (s: SaveStatus) => void): () => void {
    this.listeners.add(listener);
    listener(this.status);
    return () => this.listeners.delete(listener);
  }

  get dirty(): boolean {
    return this.notebook !== null && this.notebook.version !== this.savedVersion;
  }

  get fileName(): string {
    return baseName(this.path);
  }

  get saving(): boolean {
    return this.inFlight !== null;
  }

  /** Track a freshly opened notebook. `blocked`: the file could not be read, so never write over it. */
  reset(notebook: Notebook, path: string, exists: boolean, blocked: string | null = null): void {
    this.clearTimer();
    this.paused = false;
    this.notebook = notebook;
    this.path = path;
    this.savedVersion = notebook.version;
    this.exists = exists;
    this.blockedReason = blocked;
    this.firstUnsavedAt = null;
    if (blocked) this.setStatus({ state: 'blocked', text: 'Not saved: the file could not be read' });
    else this.setStatus(exists ? { state: 'clean', text: 'Saved' } : { state: 'new', text: 'Not saved yet' });
    this.updateTitle();
  }

  /**
   * The open notebook now lives at `path` (renamed, or saved as a new file): the same notebook,
   * saved there from now on. `savedVersion`: the version written there (Save As); null when
   * the file moved as it was (rename).
   */
  moveTo(path: string, savedVersion: number | null): void {
    this.path = path;
    if (savedVersion !== null) {
      this.savedVersion = savedVersion;
      this.exists = true;
      this.blockedReason = null;
    }
    this.lastTitle = '';
    this.updateTitle();
    if (this.dirty) this.changed();
    else this.setStatus({ state: 'saved', text: 'Saved' });
  }

  /** Write nothing until `resume` (the file is being moved to the trash). */
  pause(): void {
    this.paused = true;
    this.clearTimer();
  }

  resume(): void {
    this.paused = false;
    if (this.dirty) this.changed();
  }

  /**
   * The notebook changed: update the marker and schedule an autosave. Called for every change
   * (every streamed output too), so it only touches the DOM or timers when something flips.
   */
  changed(): void {
    if (!this.notebook) return;
    const dirty = this.dirty;
    if (dirty !== this.lastDirty) this.updateTitle();
    if (!dirty) return;
    const state = this.status.state;
    if (state !== 'dirty' && state !== 'saving' && state !== 'blocked' && state !== 'error') {
      this.setStatus({ state: 'dirty', text: 'Unsaved changes' });
    }
    if (this.blockedReason || this.paused) return;
    const now = Date.now();
    this.lastChangeAt = now;
    this.firstUnsavedAt ??= now;
    if (this.timer === null) this.timer = setTimeout(() => this.onTimer(), this.autosaveMs);
  }

  /** Debounce without re-arming a timer per change: the timer looks at when the last change was. */
  private onTimer(): void {
    this.timer = null;
    const now = Date.now();
    const due = Math.min(this.lastChangeAt + this.autosaveMs, (this.firstUnsavedAt ?? now) + this.maxWaitMs);
    if (now < due) {
      this.timer = setTimeout(() => this.onTimer(), due - now);
      return;
    }
    void this.autosave();
  }

  private async autosave(): Promise<void> {
    this.timer = null;
    if (!this.dirty || this.blockedReason || this.paused) return;
    if (this.inFlight) {
      // Never two at once: try again when this one is done.
      await this.inFlight;
      if (this.dirty) this.changed();
      return;
    }
    await this.save();
  }

  /** Save now. Resolves true when the file on disk has the current content. */
  async save(force = false): Promise<boolean> {
    const nb = this.notebook;
    if (!nb) return false;
    if ((this.blockedReason && !force) || this.paused) return false;
    while (this.inFlight) await this.inFlight;
    if (!this.dirty && this.exists && !force) return true;
    this.clearTimer();
    const version = nb.version;
    const content = serializeNotebook(nb);
    const trusted = nb.contentTrusted;
    const path = this.path;
    this.setStatus({ state: 'saving', text: 'Saving…' });
    const run = (async (): Promise<boolean> => {
      try {
        await this.backend.save(path, content, trusted);
        if (this.notebook !== nb) return true;
        this.savedVersion = version;
        this.exists = true;
        this.blockedReason = null;
        this.firstUnsavedAt = this.dirty ? Date.now() : null;
        const time = new Date().toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
        this.setStatus(this.dirty ? { state: 'dirty', text: 'Unsaved changes' } : { state: 'saved', text: `Saved ${time}` });
        return true;
      } catch (err) {
        const e = ipc.toBackendError(err);
        this.setStatus({ state: 'error', text: `Save failed: ${e.message}` });
        return false;
      } finally {
        this.inFlight = null;
        this.updateTitle();
      }
    })();
    this.inFlight = run;
    const ok = await run;
    if (ok && this.dirty) this.changed();
    return ok;
  }

  get isBlocked(): boolean {
    return this.blockedReason !== null;
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private setStatus(status: SaveStatus): void {
    this.status = status;
    for (const l of [...this.listeners]) l(status);
  }

  /** `ipybox — name.ipynb`, with a `•` in front while unsaved and the count of calls waiting for a decision. */
  titleFor(dirty: boolean): string {
    return windowTitle(this.fileName, dirty, this.waiting);
  }

  /** How many tool calls wait for a decision: the title counts them. */
  setWaiting(n: number): void {
    if (n === this.waiting) return;
    this.waiting = n;
    this.updateTitle();
  }

  private updateTitle(): void {
    const dirty = this.dirty;
    this.lastDirty = dirty;
    if (typeof document !== 'undefined') document.body.dataset.dirty = dirty ? 'true' : 'false';
    const title = this.titleFor(dirty);
    if (title === this.lastTitle) return;
    this.lastTitle = title;
    if (typeof document !== 'undefined') document.title = title;
    this.backend.setTitle(title).catch(() => {});
  }
}

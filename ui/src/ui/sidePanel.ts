/**
 * The right-hand side panel: tabs (Approvals, Audit log; later MCP servers, Sandbox policy), a
 * close button, a drag handle on its left edge. Each tab keeps its own width (a table wants more
 * room than a list). The panel never takes the keyboard focus unless asked to.
 */
import { h } from './dom';
import { icon } from './icons';

export interface PanelTab {
  id: string;
  label: string;
  /** The tab's content (owned by its view). */
  content: HTMLElement;
  /** Width in px when first shown. */
  width?: number;
  onShow?(): void;
  onHide?(): void;
}

interface TabParts {
  spec: PanelTab;
  button: HTMLButtonElement;
  badge: HTMLElement;
  panel: HTMLElement;
  width: number;
}

const MIN_WIDTH = 280;
/** Room the notebook keeps beside the panel: a cell's editor stays wide enough for a line of code. */
export const NOTEBOOK_ROOM = 560;

export class SidePanel {
  readonly element: HTMLElement;
  private readonly tabs = new Map<string, TabParts>();
  private readonly tabList: HTMLElement;
  private active: string;
  private readonly listeners = new Set<() => void>();

  constructor(tabs: PanelTab[]) {
    const first = tabs[0];
    if (!first) throw new Error('a side panel needs a tab');
    this.active = first.id;
    this.tabList = h('div', { class: 'side-tabs', role: 'tablist', 'aria-label': 'Side panel' });
    const panels = h('div', { class: 'side-panels' });
    for (const spec of tabs) {
      const badge = h('span', { class: 'badge', hidden: true });
      const button = h('button', { id: `side-tab-${spec.id}`, class: 'side-tab', type: 'button', role: 'tab', 'aria-selected': 'false', 'aria-controls': `side-panel-${spec.id}`, tabindex: -1 }, h('span', { text: spec.label }), badge);
      button.addEventListener('click', () => this.open(spec.id));
      const panel = h('div', { id: `side-panel-${spec.id}`, class: 'side-tabpanel', role: 'tabpanel', 'aria-labelledby': `side-tab-${spec.id}`, hidden: true }, spec.content);
      this.tabList.appendChild(button);
      panels.appendChild(panel);
      this.tabs.set(spec.id, { spec, button, badge, panel, width: spec.width ?? 380 });
    }
    this.tabList.addEventListener('keydown', (e) => this.onTabKey(e));
    const close = h('button', { id: 'close-side-panel', class: 'tool tool-small', type: 'button', 'aria-label': 'Close the side panel', title: 'Close' }, icon('close'));
    close.addEventListener('click', () => this.close());
    const handle = h('div', { class: 'side-resize', role: 'separator', 'aria-orientation': 'vertical', 'aria-label': 'Resize the side panel', tabindex: 0 });
    this.wireResize(handle);
    this.element = h('aside', { id: 'right-panel', class: 'right-panel', hidden: true, 'aria-label': 'Side panel' }, handle, h('div', { class: 'side-header' }, this.tabList, close), panels);
    this.select(first.id);
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  get activeTab(): string {
    return this.active;
  }

  /** Called when the panel opens, closes or changes tab. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Show the panel on `tabId` (default: the last one shown). Focus moves only with `focus`. */
  open(tabId: string = this.active, focus = false): void {
    const wasOpen = this.isOpen;
    const previous = this.active;
    if (wasOpen && previous !== tabId) this.tabs.get(previous)?.spec.onHide?.();
    this.select(tabId);
    this.element.hidden = false;
    this.applyWidth();
    if (!wasOpen || previous !== tabId) this.tabs.get(this.active)?.spec.onShow?.();
    if (focus) this.tabs.get(this.active)?.button.focus();
    this.notify();
  }

  close(): void {
    if (!this.isOpen) return;
    this.element.hidden = true;
    this.tabs.get(this.active)?.spec.onHide?.();
    this.notify();
  }

  /** A count on a tab (hidden at 0). */
  setBadge(tabId: string, count: number): void {
    const t = this.tabs.get(tabId);
    if (!t) return;
    t.badge.textContent = String(count);
    t.badge.hidden = count <= 0;
    t.button.setAttribute('aria-label', count > 0 ? `${t.spec.label} (${count} waiting)` : t.spec.label);
  }

  private select(tabId: string): void {
    if (!this.tabs.has(tabId)) return;
    this.active = tabId;
    for (const [id, t] of this.tabs) {
      const on = id === tabId;
      t.button.setAttribute('aria-selected', String(on));
      t.button.tabIndex = on ? 0 : -1;
      t.panel.hidden = !on;
    }
    this.element.dataset.tab = tabId;
  }

  private notify(): void {
    for (const fn of [...this.listeners]) fn();
  }

  private onTabKey(e: KeyboardEvent): void {
    const ids = [...this.tabs.keys()];
    const i = ids.indexOf(this.active);
    let next: number;
    if (e.key === 'ArrowRight') next = i + 1;
    else if (e.key === 'ArrowLeft') next = i - 1;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = ids.length - 1;
    else return;
    e.preventDefault();
    const id = ids[(next + ids.length) % ids.length];
    if (id) this.open(id, true);
  }

  /** The notebook keeps NOTEBOOK_ROOM px beside the panel and the other side list. */
  private maxWidth(): number {
    const parent = this.element.parentElement;
    let others = 0;
    if (parent) {
      for (const child of parent.children) {
        if (child === this.element || child.classList.contains('center') || !(child instanceof HTMLElement) || child.hidden) continue;
        others += child.getBoundingClientRect().width;
      }
    }
    const room = (parent?.clientWidth || window.innerWidth) - others - NOTEBOOK_ROOM;
    return Math.max(MIN_WIDTH, room);
  }

  /** Fit the open panel again (after the room beside it changed). */
  fit(): void {
    if (this.isOpen) this.applyWidth();
  }

  private applyWidth(): void {
    const t = this.tabs.get(this.active);
    if (!t) return;
    this.element.style.width = `${Math.min(t.width, this.maxWidth())}px`;
  }

  private setWidth(px: number): void {
    const t = this.tabs.get(this.active);
    if (!t) return;
    t.width = Math.round(Math.max(MIN_WIDTH, Math.min(px, this.maxWidth())));
    this.applyWidth();
  }

  private wireResize(handle: HTMLElement): void {
    handle.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      handle.setPointerCapture(e.pointerId);
      const startX = e.clientX;
      const startWidth = this.element.getBoundingClientRect().width;
      const move = (ev: PointerEvent): void => this.setWidth(startWidth + (startX - ev.clientX));
      const up = (): void => {
        handle.removeEventListener('pointermove', move);
        handle.removeEventListener('pointerup', up);
        handle.removeEventListener('pointercancel', up);
      };
      handle.addEventListener('pointermove', move);
      handle.addEventListener('pointerup', up);
      handle.addEventListener('pointercancel', up);
    });
    handle.addEventListener('keydown', (e) => {
      const w = this.element.getBoundingClientRect().width;
      if (e.key === 'ArrowLeft') this.setWidth(w + 24);
      else if (e.key === 'ArrowRight') this.setWidth(w - 24);
      else return;
      e.preventDefault();
    });
    window.addEventListener('resize', () => {
      if (this.isOpen) this.applyWidth();
    });
  }
}

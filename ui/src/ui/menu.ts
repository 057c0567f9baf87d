/** A small accessible menu button (button + role=menu popup; arrows, Home/End, Escape). */
import { h } from './dom';

export interface MenuItem {
  label: string;
  id?: string;
  detail?: string;
  disabled?: boolean;
  action(): void;
}

export class MenuButton {
  readonly element: HTMLElement;
  readonly button: HTMLButtonElement;
  private readonly popup: HTMLElement;
  private items: MenuItem[] = [];
  private emptyText: string;

  constructor(button: HTMLButtonElement, label: string, emptyText = 'Nothing here yet') {
    this.button = button;
    this.emptyText = emptyText;
    button.setAttribute('aria-haspopup', 'menu');
    button.setAttribute('aria-expanded', 'false');
    this.popup = h('div', { class: 'menu', role: 'menu', 'aria-label': label, hidden: true });
    this.element = h('div', { class: 'menu-anchor' }, button, this.popup);
    button.addEventListener('mousedown', (e) => e.preventDefault());
    button.addEventListener('click', () => (this.isOpen ? this.close(false) : this.open()));
    button.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown' && !this.isOpen) {
        e.preventDefault();
        this.open();
      }
    });
    this.popup.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('mousedown', (e) => {
      if (this.isOpen && e.target instanceof Node && !this.element.contains(e.target)) this.close(false);
    });
  }

  setItems(items: MenuItem[]): void {
    this.items = items;
  }

  get isOpen(): boolean {
    return !this.popup.hidden;
  }

  open(): void {
    this.popup.replaceChildren();
    if (this.items.length === 0) {
      this.popup.appendChild(h('div', { class: 'menu-empty', text: this.emptyText }));
    }
    for (const item of this.items) {
      const el = h(
        'button',
        { class: 'menu-item', type: 'button', role: 'menuitem', tabindex: -1, id: item.id, disabled: item.disabled },
        h('span', { class: 'menu-label', text: item.label }),
        item.detail ? h('span', { class: 'menu-detail', text: item.detail }) : null,
      );
      el.addEventListener('click', (e) => {
        // Keyboard (Enter/Space report detail 0): back to the menu button; mouse: wherever the action leads.
        this.close(e.detail === 0);
        item.action();
      });
      this.popup.appendChild(el);
    }
    this.popup.hidden = false;
    this.place();
    this.button.setAttribute('aria-expanded', 'true');
    this.focusItem(0);
  }

  /**
   * Pin the open popup to the window where its style puts it (below the button, its start or
   * end edge on the anchor's): a toolbar that clips what overflows it must not cut the menu
   * short, nor scroll away under it.
   */
  private place(): void {
    const p = this.popup;
    p.style.position = p.style.top = p.style.left = p.style.right = '';
    const anchor = this.element.getBoundingClientRect();
    const styled = p.getBoundingClientRect();
    const endAligned = Math.abs(styled.right - anchor.right) < Math.abs(styled.left - anchor.left);
    const button = this.button.getBoundingClientRect();
    const left = Math.max(4, Math.min(endAligned ? anchor.right - styled.width : anchor.left, window.innerWidth - styled.width - 4));
    p.style.position = 'fixed';
    p.style.top = `${Math.round(button.bottom + 4)}px`;
    p.style.left = `${Math.round(left)}px`;
    p.style.right = 'auto';
  }

  close(refocus = true): void {
    if (!this.isOpen) return;
    this.popup.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    if (refocus) this.button.focus();
  }

  private menuItems(): HTMLButtonElement[] {
    return [...this.popup.querySelectorAll<HTMLButtonElement>('.menu-item:not([disabled])')];
  }

  private focusItem(i: number): void {
    const items = this.menuItems();
    if (items.length === 0) return;
    const n = ((i % items.length) + items.length) % items.length;
    items[n]?.focus({ preventScroll: true });
  }

  private onKey(e: KeyboardEvent): void {
    const items = this.menuItems();
    const current = items.findIndex((el) => el === document.activeElement);
    switch (e.key) {
      case 'ArrowDown':
        this.focusItem(current + 1);
        break;
      case 'ArrowUp':
        this.focusItem(current - 1);
        break;
      case 'Home':
        this.focusItem(0);
        break;
      case 'End':
        this.focusItem(items.length - 1);
        break;
      case 'Escape':
        this.close();
        break;
      case 'Tab':
        this.close(false);
        return;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  }
}

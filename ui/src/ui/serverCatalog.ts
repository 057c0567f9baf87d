/**
 * The servers ipybox installs itself, and any PyPI or npm package named: one click installs
 * the package into ipybox's data directory (no terminal, nothing of it run), then the
 * add-server form shows the exact command — in the sandbox — before anything is saved or
 * started.
 */
import type { CatalogEntry, InstalledPackage, PackageSource } from '../ipc';
import { toBackendError } from '../ipc';
import { escapeUntrusted } from '../model/untrusted';
import { h } from './dom';

export interface CatalogBackend {
  mcpCatalog(): Promise<CatalogEntry[]>;
  installMcpPackage(source: PackageSource, pkg: string, args: string[]): Promise<InstalledPackage>;
}

/** A server name kernel code can import (`mcptools.NAME`) from a package's name. */
export function nameFromPackage(pkg: string): string {
  const base = pkg.split('/').pop() ?? pkg;
  const name = base
    .replace(/^(mcp[-_]server[-_]|server[-_])/i, '')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .replace(/^([0-9])/, '_$1')
    .toLowerCase();
  return name || 'server';
}

const SOURCE_WORDS: Record<PackageSource, string> = { pypi: 'PyPI', npm: 'npm' };

export class ServerCatalog {
  readonly element: HTMLDetailsElement;
  private readonly list: HTMLElement;
  private readonly status: HTMLElement;
  private readonly source: HTMLSelectElement;
  private readonly pkg: HTMLInputElement;
  private readonly buttons: HTMLButtonElement[] = [];
  private loaded = false;
  private busy = false;

  constructor(
    private readonly backend: CatalogBackend,
    /** A package was installed: show its form, named `name`. */
    private readonly installed: (name: string, result: InstalledPackage, pkg: string) => void,
  ) {
    this.list = h('ul', { id: 'server-catalog-list', class: 'server-catalog-list', 'aria-label': 'Servers ipybox can install' });
    this.status = h('p', { id: 'server-catalog-status', class: 'field-help', role: 'status', 'aria-live': 'polite' });
    this.source = h(
      'select',
      { id: 'server-catalog-source', class: 'server-input server-catalog-source', 'aria-label': 'Where the package comes from' },
      h('option', { value: 'pypi', text: 'Python (PyPI)' }),
      h('option', { value: 'npm', text: 'Node (npm)' }),
    );
    this.pkg = h('input', {
      id: 'server-catalog-package',
      type: 'text',
      class: 'server-input',
      spellcheck: 'false',
      autocomplete: 'off',
      placeholder: 'a package name, e.g. mcp-server-time',
      'aria-label': 'Package name',
    });
    const other = this.button('server-catalog-install-package', 'Install', 'Install the package named');
    other.addEventListener('click', () => {
      const pkg = this.pkg.value.trim();
      if (!pkg) {
        this.status.textContent = 'Type the name of a package first.';
        this.pkg.focus();
        return;
      }
      void this.install(nameFromPackage(pkg), this.source.value as PackageSource, pkg, []);
    });
    this.pkg.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        other.click();
      }
    });
    this.element = h(
      'details',
      { id: 'server-catalog', class: 'server-catalog' },
      h('summary', { text: 'Install a server' }),
      h('p', {
        class: 'field-help',
        text: 'ipybox installs it into its own folder — no terminal, and nothing of it runs yet. You see its exact command before it first starts; it runs in the sandbox unless you switch that off.',
      }),
      this.list,
      h('div', { class: 'server-catalog-other' }, this.source, this.pkg, other),
      this.status,
    );
    this.element.addEventListener('toggle', () => {
      if (this.element.open && !this.loaded) void this.load();
    });
  }

  private button(id: string, text: string, label: string): HTMLButtonElement {
    const b = h('button', { id, class: 'button button-secondary button-small', type: 'button', text, 'aria-label': label });
    this.buttons.push(b);
    return b;
  }

  private async load(): Promise<void> {
    let entries: CatalogEntry[];
    try {
      entries = await this.backend.mcpCatalog();
    } catch (err) {
      this.status.textContent = `The catalog could not be read: ${toBackendError(err).message}`;
      return;
    }
    this.loaded = true;
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const install = this.button(`server-catalog-install-${entry.name}`, 'Install', `Install ${entry.name}`);
        install.addEventListener('click', () => void this.install(entry.name, entry.source, entry.package, entry.args));
        return h(
          'li',
          { class: 'server-catalog-entry', 'data-server': entry.name },
          h('div', { class: 'server-catalog-text' }, h('strong', { text: entry.name }), h('span', { class: 'field-help', text: ` ${entry.summary}` }), h('code', { class: 'server-catalog-package', text: `${entry.package} (${SOURCE_WORDS[entry.source]})` })),
          install,
        );
      }),
    );
  }

  private async install(name: string, source: PackageSource, pkg: string, args: string[]): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    for (const b of this.buttons) b.disabled = true;
    this.status.textContent = `Installing ${escapeUntrusted(pkg)} from ${SOURCE_WORDS[source]}… (a minute at most, the first time)`;
    try {
      const result = await this.backend.installMcpPackage(source, pkg, args);
      this.status.textContent = `Installed ${escapeUntrusted(pkg)} ${escapeUntrusted(result.version)}.`;
      // The form takes over: the catalog folds away so that the form is in view.
      this.element.open = false;
      this.installed(name, result, pkg);
    } catch (err) {
      this.status.textContent = `Not installed: ${toBackendError(err).message}`;
    } finally {
      this.busy = false;
      for (const b of this.buttons) b.disabled = false;
    }
  }
}

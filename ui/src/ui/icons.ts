/** Small stroke icons (24×24 grid, drawn for this app), built as SVG DOM. */
const PATHS = {
  run: 'M7 5v14l11-7z',
  runAll: 'M4 5v14l8-7zM12 5v14l8-7z',
  stop: 'M7 7h10v10H7z',
  restart: 'M20 11a8 8 0 1 0-2.3 6.6M20 4v7h-7',
  save: 'M5 4h11l3 3v13H5zM8 4v5h7V4M8 20v-6h8v6',
  plus: 'M12 5v14M5 12h14',
  trash: 'M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13M10 11v6M14 11v6',
  up: 'M12 19V5M6 11l6-6 6 6',
  down: 'M12 5v14M6 13l6 6 6-6',
  clear: 'M4 20h16M7 16l9.5-9.5a2.1 2.1 0 0 1 3 3L10 19H7z',
  folder: 'M3 6h6l2 2h10v11H3z',
  chevron: 'M6 9l6 6 6-6',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  package: 'M12 3l8 4.5v9L12 21l-8-4.5v-9zM4 7.5l8 4.5 8-4.5M12 12v9',
  panel: 'M3 4h18v16H3zM15 4v16',
  sidebar: 'M3 4h18v16H3zM9 4v16',
  shield: 'M12 3l7 3v5c0 5-3 8.5-7 10-4-1.5-7-5-7-10V6z',
  newFile: 'M6 3h8l4 4v14H6zM14 3v4h4M12 11v6M9 14h6',
  refresh: 'M20 11a8 8 0 1 0-2.3 6.6M20 4v7h-7',
  approval: 'M12 3l7 3v5c0 5-3 8.5-7 10-4-1.5-7-5-7-10V6zM8.5 12l2.5 2.5 4.5-5',
  close: 'M6 6l12 12M18 6L6 18',
  export: 'M12 4v11M7 9l5-5 5 5M5 15v5h14v-5',
  agent: 'M12 3v3M8 6h8a3 3 0 0 1 3 3v7a3 3 0 0 1-3 3H8a3 3 0 0 1-3-3V9a3 3 0 0 1 3-3zM9.5 11.5v1M14.5 11.5v1M9.5 16h5M2.5 11v3M21.5 11v3',
  settings: 'M4 6h9M17 6h3M15 4v4M4 12h3M11 12h9M9 10v4M4 18h11M19 18h1M17 16v4',
} as const;

export type IconName = keyof typeof PATHS;

const NS = 'http://www.w3.org/2000/svg';

export function icon(name: IconName, doc: Document = document): SVGSVGElement {
  const svg = doc.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.classList.add('icon');
  const path = doc.createElementNS(NS, 'path');
  path.setAttribute('d', PATHS[name]);
  const filled = name === 'run' || name === 'runAll' || name === 'stop';
  path.setAttribute('fill', filled ? 'currentColor' : 'none');
  path.setAttribute('stroke', 'currentColor');
  path.setAttribute('stroke-width', filled ? '1.5' : '1.8');
  path.setAttribute('stroke-linecap', 'round');
  path.setAttribute('stroke-linejoin', 'round');
  svg.appendChild(path);
  return svg;
}

// Builds what the browser tests load, when it is missing or older than its sources:
// the app (src-tauri/ui-dist/, via `npm run build`) and the fake backend (tests/browser/.build/mock.js).
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function newest(paths) {
  let t = 0;
  const walk = (p) => {
    if (!existsSync(p)) return;
    const s = statSync(p);
    if (s.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else t = Math.max(t, s.mtimeMs);
  };
  for (const p of paths) walk(join(ROOT, p));
  return t;
}

function mtime(p) {
  const f = join(ROOT, p);
  return existsSync(f) ? statSync(f).mtimeMs : 0;
}

const run = (cmd) => execSync(cmd, { cwd: ROOT, stdio: 'inherit' });

if (newest(['src', 'index.html', 'package.json', 'vite.config.ts', 'tsconfig.json']) > mtime('../src-tauri/ui-dist/index.html')) {
  console.log('# building the app (src-tauri/ui-dist/)');
  run('npm run build --silent');
}
if (newest(['tests/browser/mock', 'package.json']) > mtime('tests/browser/.build/mock.js')) {
  console.log('# building the fake backend (tests/browser/.build/mock.js)');
  run('npx vite build -c tests/browser/mock/vite.config.ts');
}

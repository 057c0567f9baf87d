// The README's screenshots, taken from the real app: a notebook with a Markdown cell with
// math, an inline plot and a pandas table. pandas comes in through the window's package
// field, so this also tests installing a package from the UI. With
// IPYBOX_UPDATE_SCREENSHOTS=1 the pictures are copied into docs/images/.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, ROOT, workspace } from './webdriver.mjs';

let app;
after(async () => app?.quit());

const md = (id, source) => ({ cell_type: 'markdown', id, metadata: {}, source });
const code = (id, source) => ({ cell_type: 'code', id, metadata: {}, execution_count: null, outputs: [], source });

test('a notebook with an inline plot and a pandas table', async () => {
  const dir = workspace({
    'sales.ipynb': {
      cells: [
        md('intro', '# Quarterly sales\n\nRevenue by region, in k€. Growth is $g = (r_t - r_{t-1}) / r_{t-1}$.'),
        code('table', 'import pandas as pd\n\nsales = pd.DataFrame({\n    "region": ["North", "South", "East", "West"],\n    "q1": [120, 95, 143, 88],\n    "q2": [134, 101, 150, 97],\n})\nsales["growth"] = (sales.q2 - sales.q1) / sales.q1\nsales'),
        code('plot', 'import matplotlib.pyplot as plt\n\nax = sales.plot.bar(x="region", y=["q1", "q2"], figsize=(6, 3), rot=0)\nax.set_ylabel("k€")\nplt.show()'),
      ],
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    },
  });
  app = await App.launch(['open', join(dir, 'sales.ipynb')]);
  await app.ready();
  await app.until('the kernel', async () => (await app.kernelStatus()) === 'idle', 60000);
  await app.click('#package-spec');
  await app.type('pandas');
  await app.click('#install-package');
  const status = await app.until('pandas to install', () => app.execute(
    `const s = document.querySelector('.install-status');
     return s && s.dataset.state && s.dataset.state !== 'running' ? s.dataset.state + ': ' + s.textContent : null;`), 240000);
  assert.doesNotMatch(status, /^(error|failed)/i, status);
  await app.click('#run-all');
  const states = await app.until('every cell to run', () => app.execute(
    `const s = [...document.querySelectorAll('.cell[data-cell-type="code"]')].map((c) => c.dataset.state);
     return s.every((x) => x === 'done' || x === 'failed') ? s : null;`), 60000);
  assert.deepEqual(states, ['done', 'done'], 'both cells ran');
  assert.equal(await app.execute('return document.querySelectorAll(".cell table").length;'), 1, 'the table renders as HTML');
  assert.equal(await app.execute('return document.querySelectorAll(".cell img.output-image").length;'), 1, 'the plot is inline');
  await app.until('the plot to be decoded', () => app.execute(
    'const i = document.querySelector(".cell img.output-image"); return !!i && i.complete && i.naturalWidth > 0;'));
  await app.execute('document.querySelector("#install-output")?.setAttribute("hidden", ""); document.activeElement?.blur(); return true;');
  await new Promise((r) => setTimeout(r, 500)); // painted
  const shot = await app.screenshot('desktop-notebook');
  if (process.env.IPYBOX_UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs/images/desktop-notebook.png'));
});

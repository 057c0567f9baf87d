// Notebooks for the browser tests, made in place.
import zlib from 'node:zlib';

/** An .ipynb (as text) of code cells with these sources. */
export function notebook(...sources) {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: sources.map((source, i) => ({ cell_type: 'code', id: `c${i}`, metadata: {}, source, outputs: [], execution_count: null })),
  });
}

/** A PNG (base64) of width × height: a white plot with axes and a noisy sine curve, about
 *  the size matplotlib writes for a 640 × 480 figure. `seed` varies the curve. */
export function plotPng(width = 640, height = 480, seed = 1) {
  const rgb = Buffer.alloc(height * (width * 3 + 1), 255);
  let state = seed * 2654435761 >>> 0;
  const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const put = (x, y, r, g, b) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const at = y * (width * 3 + 1) + 1 + x * 3;
    rgb[at] = r;
    rgb[at + 1] = g;
    rgb[at + 2] = b;
  };
  for (let y = 0; y < height; y++) rgb[y * (width * 3 + 1)] = 0;
  for (let x = 60; x < width - 20; x++) put(x, height - 50, 0, 0, 0);
  for (let y = 20; y < height - 50; y++) put(60, y, 0, 0, 0);
  for (let x = 60; x < width - 20; x++) {
    const y = Math.round(height / 2 - 150 * Math.sin((x + seed * 40) / 50) + 12 * (random() - 0.5));
    for (let d = -1; d <= 1; d++) for (let e = -1; e <= 1; e++) put(x + d, y + e, 31 + d * 10, 119, 180 - e * 10);
  }
  for (let i = 0; i < 1500; i++) {
    const shade = 150 + Math.floor(random() * 100);
    put(60 + Math.floor(random() * (width - 80)), 20 + Math.floor(random() * (height - 70)), 255, shade, 14);
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(rgb)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return png.toString('base64');
}

/** pandas' `DataFrame.to_html()` as a notebook shows it: its scoped <style> and a table. */
export function pandasTable(rows = 20, columns = 8, seed = 1) {
  const names = Array.from({ length: columns }, (_, i) => `col_${i}`);
  const head = `<tr style="text-align: right;">\n      <th></th>\n${names.map((n) => `      <th>${n}</th>`).join('\n')}\n    </tr>`;
  const body = Array.from({ length: rows }, (_, r) => {
    const cells = names.map((_, c) => `      <td>${(((r + 1) * (c + 3) * seed) % 997 / 7.3).toFixed(4)}</td>`).join('\n');
    return `    <tr>\n      <th>${r}</th>\n${cells}\n    </tr>`;
  }).join('\n');
  return `<div>\n<style scoped>\n    .dataframe tbody tr th:only-of-type {\n        vertical-align: middle;\n    }\n\n    .dataframe tbody tr th {\n        vertical-align: top;\n    }\n\n    .dataframe thead th {\n        text-align: right;\n    }\n</style>\n<table border="1" class="dataframe">\n  <thead>\n    ${head}\n  </thead>\n  <tbody>\n${body}\n  </tbody>\n</table>\n<p>${rows} rows × ${columns} columns</p>\n</div>`;
}

/** A 50-cell analysis notebook as it comes from JupyterLab: 10 Markdown cells, 40 code
 *  cells of which 10 show a plot (PNG), 5 a pandas table (HTML) and the rest text. */
export function analysisNotebook() {
  const cells = [];
  let plots = 0;
  let tables = 0;
  let count = 0;
  for (let i = 0; i < 50; i++) {
    const id = `a${i}`;
    if (i % 5 === 0) {
      cells.push({ cell_type: 'markdown', id, metadata: {}, source: [`## Step ${i / 5 + 1}\n`, '\n', 'We look at the **monthly** means, $\\bar x = \\frac{1}{n}\\sum x_i$, per station:\n', '\n', '- cleaned\n', '- resampled\n'] });
      continue;
    }
    count++;
    let outputs;
    if (plots < 10 && i % 4 === 1) {
      plots++;
      outputs = [{ output_type: 'display_data', data: { 'image/png': plotPng(640, 480, plots), 'text/plain': ['<Figure size 640x480 with 1 Axes>'] }, metadata: {} }];
    } else if (tables < 5 && i % 4 === 2) {
      tables++;
      outputs = [{ output_type: 'execute_result', execution_count: count, data: { 'text/html': pandasTable(20, 8, tables), 'text/plain': ['      col_0   col_1 ...'] }, metadata: {} }];
    } else {
      outputs = [{ output_type: 'stream', name: 'stdout', text: Array.from({ length: 5 }, (_, k) => `step ${i}.${k}: ok\n`) }];
    }
    cells.push({ cell_type: 'code', id, metadata: {}, execution_count: count, source: [`result_${i} = analyse(df, ${i})\n`, `result_${i}`], outputs });
  }
  if (plots !== 10 || tables !== 5) throw new Error(`analysisNotebook: ${plots} plots, ${tables} tables`);
  return JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { display_name: 'Python 3 (ipykernel)', language: 'python', name: 'python3' } }, cells });
}

/** A label over the whole window, bound to the toolbar's Run-all button. */
export const RUN_ALL_LABEL =
  '<label for="run-all" style="position:fixed;inset:0;display:block;z-index:2147483647;opacity:0.02;background:#fff;cursor:default">&nbsp;</label>';

/** The same with the property name escaped, which only a CSS parser reads as `position`. */
export const ESCAPED_LABEL = '<label for="run-all" style="p\\6f sition:fixed;inset:0;display:block;z-index:2147483647;opacity:0.02"></label>';

/** A fake approval panel drawn over the real one. */
export const FAKE_PANEL =
  '<div style="position:fixed;top:0;right:0;bottom:0;width:460px;z-index:2147483647;background:#fff;font:16px sans-serif;padding:40px">' +
  'github.create_issue is waiting for your decision <button>Approve</button></div>';

/** A notebook whose Markdown cell holds RUN_ALL_LABEL, one code cell per given HTML output, and
 *  a last code cell never run ("victim"). */
export function hostileNotebook(...outputsHtml) {
  const cells = [
    { cell_type: 'markdown', id: 'md', metadata: {}, source: `# Notes\n\n${RUN_ALL_LABEL}\n` },
    ...outputsHtml.map((html, i) => ({
      cell_type: 'code',
      id: `h${i}`,
      metadata: {},
      execution_count: i + 1,
      source: `display(HTML(payload_${i}))`,
      outputs: [{ output_type: 'display_data', data: { 'text/html': html, 'text/plain': '<IPython.core.display.HTML object>' }, metadata: {} }],
    })),
    { cell_type: 'code', id: 'victim', metadata: {}, execution_count: null, source: 'print("this ran")', outputs: [] },
  ];
  return JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells });
}

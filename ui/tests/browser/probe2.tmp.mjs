import { startServer, launchBrowser, openApp } from './harness.mjs';
const server = await startServer();
const chromium = await launchBrowser();
const width = Number(process.argv[2] ?? 1024);
const agents = Number(process.argv[3] ?? 4);
const { page } = await openApp(chromium.browser, server.url, { notebook: null }, { width, height: 800 });
if (agents) {
const batch = Array.from({length: agents}, (_, i) => i + 1).map((n) => ({ type: 'cell_queued', session: n, name: `agent session ${n}f2a9c1e`, execution_id: `e${n}`, code: 'print(1)' }));
await page.evaluate((b) => window.__mock.emit('agent', b), batch);
await page.waitForSelector(`#doc-tab-agent-${agents}`);
}
const r = await page.evaluate(() => {
  const w = (s) => { const e = document.querySelector(s); return e ? `${s}:${Math.round(e.getBoundingClientRect().width)}` : `${s}:none`; };
  return [w('.app'), w('header.toolbar'), w('.workbench'), w('.center'), w('#doc-tabs'), w('#sidebar'), w('.statusbar'), document.documentElement.scrollWidth];
});
console.log(width, agents, r.join(' '));
await chromium.close();
await server.close();

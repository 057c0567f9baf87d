import { startServer, launchBrowser, openApp } from './harness.mjs';
const server = await startServer();
const chromium = await launchBrowser();
for (const width of [1024, 1280, 1440]) {
  const { page } = await openApp(chromium.browser, server.url, { notebook: null }, { width, height: 800 });
  const batch = [1, 2, 3, 4, 5, 6].map((n) => ({ type: 'cell_queued', session: n, name: `agent session ${n}f2a9c1e`, execution_id: `e${n}`, code: 'print(1)' }));
  await page.evaluate((b) => window.__mock.emit('agent', b), batch);
  await page.waitForSelector('#doc-tab-agent-6', { state: 'attached' });
  const r = await page.evaluate(() => {
    const out = [];
    for (const b of document.querySelectorAll('.toolbar button, .toolbar select, #kernel-status, #sandbox-badge')) {
      const rc = b.getBoundingClientRect();
      if (rc.width === 0) continue;
      out.push(`${b.id || b.className}:${Math.round(rc.left)}-${Math.round(rc.right)}`);
    }
    return { vw: innerWidth, docW: document.documentElement.scrollWidth, out, more: document.querySelector('#doc-tabs-more')?.textContent, tabs: [...document.querySelectorAll('.doc-tab')].map((t) => Math.round(t.getBoundingClientRect().right)) };
  });
  console.log(width, JSON.stringify(r));
  await page.screenshot({ path: `/tmp/toolbar-${width}.png`, clip: { x: 0, y: 0, width, height: 120 } });
  await page.close();
}
await chromium.close();
await server.close();

// srt, as its own command line runs it, with every request its proxy refuses told to ipybox.
//
// Run as `node srt-report.mjs <srt's cli.js> <srt's arguments…>` with descriptor 3 the write
// end of a pipe only ipybox reads. srt keeps its refusals in an in-process store (its
// library's `getSandboxViolationStore()`); this module shares that store with srt's command
// line (one module instance), so ipybox learns what srt's proxy itself refused, never what
// the sandboxed command prints. One JSON string per line: srt's record of the refusal,
// `deny network-outbound HOST:PORT (REASON)`.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const cliPath = process.argv[2];
const cli = pathToFileURL(cliPath);
// Reopened close-on-exec (Node opens files so), and the inherited number closed: nothing
// srt starts — the sandbox — inherits the channel.
const out = fs.openSync('/proc/self/fd/3', 'a');
fs.closeSync(3);
const { SandboxManager } = await import(new URL('sandbox/sandbox-manager.js', cli).href);
const store = SandboxManager.getSandboxViolationStore();
let told = store.getTotalCount();
store.subscribe((violations) => {
  const fresh = Math.min(store.getTotalCount() - told, violations.length);
  told = store.getTotalCount();
  if (fresh <= 0) return;
  for (const v of violations.slice(-fresh)) {
    if (!v.line.startsWith('deny network-outbound ')) continue;
    try {
      fs.writeSync(out, `${JSON.stringify(v.line)}\n`);
    } catch {
      // ipybox is gone; srt goes with it.
    }
  }
});
// srt's command line reads its arguments from process.argv, as if started as itself.
process.argv.splice(1, 2, cliPath);
await import(cli.href);

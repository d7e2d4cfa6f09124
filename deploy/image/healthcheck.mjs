// The image's HEALTHCHECK: GET /api/health on this container's API (200 when the
// store answers), on the port of `--port N` in PID 1's command line, else RUNSET_PORT.
// A worker container serves no API: it is healthy while it runs (`runset worker`
// exits when it cannot work). Exit 0 healthy, 1 unhealthy.
// Usage: node healthcheck.mjs [file holding PID 1's command line, NUL-separated]
import { readFileSync } from 'node:fs';

const cmdline = (() => {
  try {
    return readFileSync(process.argv[2] ?? '/proc/1/cmdline', 'utf8').split('\0');
  } catch {
    return [];
  }
})();
if (cmdline.includes('worker')) process.exit(0);

const flag = cmdline.findIndex((arg) => arg === '--port' || arg.startsWith('--port='));
const port = flag === -1 ? process.env.RUNSET_PORT || '8080' : cmdline[flag].slice('--port='.length) || cmdline[flag + 1];
try {
  const res = await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}

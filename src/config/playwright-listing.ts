/**
 * Running Playwright's own listing (`playwright test --list --reporter=json`)
 * for one `type: playwright` entry, with the entry's installed @playwright/test,
 * and handing back the raw report. Turning a report into cases is apart
 * (./playwright-discovery.ts): the API does that from reports it did not make
 * (an upload's LISTING_FILE) and must never spawn anything for them.
 */
import { spawn } from 'node:child_process';
import type { PlaywrightTestSpec } from '../core/types.js';
import { locateFramework } from '../executors/frameworks/locate.js';
import { playwrightAdapter } from '../executors/playwright/adapter.js';
import { playwrightEnvironment } from '../executors/playwright/locate.js';
import { errorSummary } from '../executors/playwright/error-text.js';
import { TailBuffer } from '../executors/tail-buffer.js';
import { LIST_TIMEOUT_MS } from '../executors/frameworks/listing.js';

/** Runs the listing in the entry's folder; resolves with the parsed JSON report, as Playwright wrote it. */
export async function listPlaywrightEntry(entry: PlaywrightTestSpec): Promise<unknown> {
  const install = await locateFramework(playwrightAdapter, entry);
  const args = [install.cli, 'test', '--list', '--reporter=json', '-c', entry.config, '--pass-with-no-tests'];
  if (entry.project !== undefined) args.push('--project', entry.project);
  if (entry.grep !== undefined) args.push('--grep', entry.grep);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: entry.dir, env: playwrightEnvironment(install, entry.dir, {}), stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err = new TailBuffer(8 * 1024);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.write(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), LIST_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString('utf8');
      try {
        resolve(JSON.parse(text.slice(text.indexOf('{'))) as unknown);
      } catch {
        const why = signal ? `killed by ${signal} (more than ${LIST_TIMEOUT_MS / 1000}s?)` : `exited with code ${code}`;
        const stderr = errorSummary(err.toString());
        reject(new Error(`playwright test --list ${why}${stderr ? `: ${stderr}` : ''}`));
      }
    });
  });
}

/**
 * The reference a framework test compares runset with: what a pinned framework
 * version reports when it runs a fixture suite directly. That is a function of
 * the version, the suite's files, the code that writes and reads them (the
 * fixture modules) and Node, so it is kept beside the installed versions
 * (node_modules/.cache/runset-frameworks/direct-<hash>.json) under a hash of
 * all of them and reused: each direct run is a framework start, seconds of CPU
 * a test file. Any change to one of them is a new hash, so a new direct run.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FRAMEWORK_CACHE } from './framework-versions.js';

/** A case as the framework reported it (test/e2e/framework-fixtures.ts `DirectCase`). */
interface ReportedCase {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  firstLine: string | null;
}

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'e2e');

/**
 * `run()`'s report of the suite in `dir` by `framework` (its package and version),
 * or the one an earlier run with the same inputs recorded.
 */
export async function directReport<C extends ReportedCase>(framework: string, dir: string, run: () => Promise<Map<string, C>>): Promise<Map<string, C>> {
  const hash = createHash('sha256').update(JSON.stringify([framework, process.version]));
  for (const file of readdirSync(FIXTURES).filter((f) => f.startsWith('framework-fixtures') && f.endsWith('.js')).sort()) hash.update(file).update(readFileSync(path.join(FIXTURES, file)));
  hashFiles(hash, dir, '');
  const kept = path.join(FRAMEWORK_CACHE, `direct-${hash.digest('hex').slice(0, 32)}.json`);
  if (existsSync(kept)) return new Map((JSON.parse(readFileSync(kept, 'utf8')) as C[]).map((c) => [c.name, c]));
  const report = await run();
  mkdirSync(FRAMEWORK_CACHE, { recursive: true });
  // Written beside, then moved in place: a reader never sees half a report.
  const staging = `${kept}.${process.pid}`;
  writeFileSync(staging, JSON.stringify([...report.values()]));
  renameSync(staging, kept);
  return report;
}

/** The suite's own files, by relative path; not its node_modules (a link to the installed version, named by `framework`). */
function hashFiles(hash: ReturnType<typeof createHash>, root: string, relative: string): void {
  for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const name = path.join(relative, entry.name);
    if (entry.isDirectory()) hashFiles(hash, root, name);
    else if (entry.isFile()) hash.update(name).update(readFileSync(path.join(root, name)));
  }
}

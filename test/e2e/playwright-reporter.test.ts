/**
 * runset's reporter inside real Playwright runners (the oldest supported, one
 * that re-launches itself for an ES module config, and runset's own): every
 * event reaches the event file, in order, and each attempt carries its worker
 * slot (lane) within the run's workers. The three runners run at once: each
 * has its own suite and event file.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReporterEvent } from '../../src/executors/playwright/reporter.js';
import { tempDir } from '../helpers/server.js';
import { bundledVersion, OLDEST_SUPPORTED, playwrightModules } from '../helpers/playwright-versions.js';
import { writeCompatSuite, type ModuleKind } from './playwright-compat-fixtures.js';

const REPORTER = fileURLToPath(new URL('../../src/executors/playwright/reporter.js', import.meta.url));

/** Runs Playwright's CLI with runset's reporter; not sync, so the runners of the three cases run at once. */
function runner(cli: string, cwd: string, events: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, 'test', `--reporter=${REPORTER}`, '--workers=2'], { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, RUNSET_REPORTER_FILE: events } }, (error, _stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr });
    });
  });
}

const runs: Array<[string, ModuleKind]> = [[OLDEST_SUPPORTED, 'cjs'], ['1.33.0', 'esm'], [bundledVersion(), 'esm']];

describe('reporter events', { concurrency: true }, () => {
  for (const [version, kind] of runs) {
    test(`reporter events from Playwright ${version} (${kind}): all of them, in order, with lanes`, async () => {
      const modules = playwrightModules(version);
      const dir = path.join(tempDir('runset-pw-reporter-'), 'suite');
      writeCompatSuite(dir, kind, 'lanes', modules);
      const events = path.join(dir, '..', 'events.jsonl');
      const res = await runner(path.join(modules, '@playwright', 'test', 'cli.js'), dir, events);
      assert.equal(res.status, 1, `one test fails: ${res.stderr}`);
      const got = readFileSync(events, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ReporterEvent);
      assert.deepEqual(got.slice(0, 2).map((e) => e.type), ['ready', 'begin'], 'ready as Playwright constructs it, then the begin');
      assert.equal(got.at(-1)?.type, 'end');
      const begins = got.filter((e) => e.type === 'testBegin');
      const ends = got.filter((e) => e.type === 'testEnd');
      assert.equal(ends.length, 8, 'six cases, two of them retried (the failure and the flaky one)');
      // Playwright reports a statically skipped test without running it: no begin, and no worker.
      assert.ok(begins.length >= 6, `${begins.length} begins`);
      for (const e of [...begins, ...ends]) {
        const lane = (e as { lane?: number }).lane;
        if (e.type === 'testEnd' && e.status === 'skipped' && lane === undefined) continue;
        assert.ok(lane === 0 || lane === 1, `lane of ${JSON.stringify(e)}`);
      }
      for (const end of ends) {
        const i = got.indexOf(end);
        const begin = got.slice(0, i).findLast((e) => e.type === 'testBegin' && e.key === end.key && e.retry === end.retry);
        if (begin) assert.equal((begin as { lane?: number }).lane, end.lane, 'an attempt begins and ends in one lane');
      }
    });
  }
});

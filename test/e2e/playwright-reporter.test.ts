/**
 * runset's reporter inside real Playwright runners (the oldest supported, one
 * that re-launches itself for an ES module config, and runset's own): every
 * event reaches the event file, in order, and each attempt carries its worker
 * slot (lane) within the run's workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReporterEvent } from '../../src/executors/playwright/reporter.js';
import { tempDir } from '../helpers/server.js';
import { bundledVersion, OLDEST_SUPPORTED, playwrightModules } from '../helpers/playwright-versions.js';
import { writeCompatSuite, type ModuleKind } from './playwright-compat-fixtures.js';

const REPORTER = fileURLToPath(new URL('../../src/executors/playwright/reporter.js', import.meta.url));

const runs: Array<[string, ModuleKind]> = [[OLDEST_SUPPORTED, 'cjs'], ['1.33.0', 'esm'], [bundledVersion(), 'esm']];

for (const [version, kind] of runs) {
  test(`reporter events from Playwright ${version} (${kind}): all of them, in order, with lanes`, () => {
    const modules = playwrightModules(version);
    const dir = path.join(tempDir('runset-pw-reporter-'), 'suite');
    writeCompatSuite(dir, kind, 'lanes', modules);
    const events = path.join(dir, '..', 'events.jsonl');
    const res = spawnSync(process.execPath, [path.join(modules, '@playwright', 'test', 'cli.js'), 'test', `--reporter=${REPORTER}`, '--workers=2'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, RUNSET_REPORTER_FILE: events },
    });
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

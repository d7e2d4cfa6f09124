/**
 * The supported Playwright versions, proven: for each (oldest supported, a few
 * between, runset's own), a small browser-free suite as an ES module package
 * with a TypeScript config and as a CommonJS one (the oldest: both; the others:
 * one of the two each, alternating) runs through the real server,
 * and its members — names, outcomes, errors, retries, skips, output — match
 * what that same Playwright reports when the suite is run directly with
 * `playwright test --reporter=json`; the same holds for a suite with no
 * Playwright of its own, of either kind, run with runset's. Each version is installed from npm once
 * into node_modules/.cache/runset-compat; an install that fails fails here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { bundledVersion, COMPAT_VERSIONS, playwrightModules } from '../helpers/playwright-versions.js';
import type { PlaywrightMember } from './playwright-fixtures.js';
import { eachAtMost, runDirectly, writeCompatSuite, type DirectCase, type ModuleKind } from './playwright-compat-fixtures.js';

type Member = PlaywrightMember;

interface Suite {
  version: string;
  kind: ModuleKind;
  env: string;
  dir: string;
  cli: string;
}

const BOTH = ['esm', 'cjs'] as const;

/**
 * The module kinds each version is tried with: both for the oldest; one each,
 * alternating, for the others (ESM on 1.33, which re-launches itself with an
 * ESM loader for a TypeScript config, and on 1.49 and runset's own; CommonJS
 * on 1.40), so both kinds still meet every era of Playwright's config loader
 * at less cost. Runset's own meets CommonJS in the lent suite (a CommonJS
 * suite finds a lent Playwright as it finds its own, by require), and its own
 * ESM suite proves no lending hook is needed where the suite has its own.
 */
function kindsOf(version: string): ReadonlyArray<ModuleKind> {
  const at = COMPAT_VERSIONS.indexOf(version);
  if (at === 0) return BOTH;
  return [at % 2 === 1 || at === COMPAT_VERSIONS.length - 1 ? 'esm' : 'cjs'];
}

/** A version's direct run as the reference of another suite of the same body: only the file's name differs. */
function renamed(cases: Map<string, DirectCase>, from: Suite, to: Suite): Map<string, DirectCase> {
  const file = (s: Suite) => `v${s.env}.spec.${s.kind === 'esm' ? 'ts' : 'js'}`;
  const list = [...cases.values()].map((c) => ({ ...c, name: c.name.replace(file(from), file(to)) }));
  return new Map(list.map((c) => [c.name, c]));
}

after(() => assertNoLeakedServers());

describe('Playwright versions: members match a direct run', () => {
  const suites: Suite[] = [];
  let server: RunningServer;
  const direct = new Map<string, Map<string, DirectCase>>();
  /** Each suite's set, created together so the server's two slots run two at a time. */
  const sets = new Map<string, string>();

  before(async () => {
    const root = tempDir('runset-pw-compat-');
    const entries: string[] = [];
    for (const version of COMPAT_VERSIONS) {
      const modules = playwrightModules(version); // throws, with npm's words, when it cannot install
      for (const kind of kindsOf(version)) {
        const env = `${kind}-${version.replace(/\./g, '-')}`;
        const dir = path.join(root, env);
        writeCompatSuite(dir, kind, `v${env}`, modules);
        suites.push({ version, kind, env, dir, cli: path.join(modules, '@playwright', 'test', 'cli.js') });
        entries.push(`  - { name: "${env}", type: playwright, dir: "${env}", environments: ["${env}"] }`);
      }
    }
    // No Playwright of its own: runset lends its copy (NODE_PATH, and an ESM resolve hook).
    for (const kind of ['esm', 'cjs'] as const) {
      const env = `${kind}-lent`;
      writeCompatSuite(path.join(root, env), kind, `v${env}`, undefined);
      entries.push(`  - { name: "${env}", type: playwright, dir: "${env}", environments: ["${env}"] }`);
      suites.push({ version: 'lent', kind, env, dir: path.join(root, env), cli: '' });
    }
    const configPath = path.join(root, 'runset.config.yaml');
    writeFileSync(configPath, `environments:\n${suites.map((s) => `  ${s.env}: { variables: {} }`).join('\n')}\ntests:\n${entries.join('\n')}\n`);
    // One direct run per version: what Playwright reports of the suite's body does not
    // depend on the module kind (which only changes how the file loads; a suite that
    // fails to load under runset fails its comparison anyway), so a version's other
    // kind, and a lent suite (runset's own version), take that run, renamed, as theirs.
    const references = suites.filter((s, i) => s.version !== 'lent' && suites.findIndex((o) => o.version === s.version) === i);
    const reports = await eachAtMost(references, 2, (s) => runDirectly(s.dir, s.cli));
    for (const s of suites) {
      const version = s.version === 'lent' ? bundledVersion() : s.version;
      const at = references.findIndex((r) => r.version === version);
      direct.set(s.env, renamed(reports[at] as Map<string, DirectCase>, references[at] as Suite, s));
    }
    // After the direct runs, not beside them: the server lists every entry as it starts,
    // and on a busy machine both at once outlast startRunset's 45 s.
    await startServer(configPath);
  });
  after(async () => {
    await server?.stop();
  });

  /** Starts the server and queues every suite's set at once, so its two slots run two at a time. */
  async function startServer(configPath: string): Promise<void> {
    // The suites never open a browser: any executable passes runset's browser check.
    server = await startRunset({ configPath, env: { RUNSET_CHROMIUM: process.execPath }, args: ['--workers', '2'] });
    for (const s of suites) {
      const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: s.env } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      sets.set(s.env, created.body.testRunSetId as string);
    }
  }

  for (const version of [...COMPAT_VERSIONS, 'lent']) {
    for (const kind of version === 'lent' ? BOTH : kindsOf(version)) {
      const which = version === 'lent' ? "runset's own @playwright/test lent to a suite without one" : `@playwright/test ${version}`;
      test(`${which}, ${kind === 'esm' ? 'ES module with playwright.config.ts' : 'CommonJS'}`, async () => {
        const suite = suites.find((s) => s.version === version && s.kind === kind)!;
        const expected = direct.get(suite.env)!;
        assert.equal(expected.size, 6, `the direct run reports the suite's six cases: ${[...expected.keys()].join(', ')}`);
        const id = sets.get(suite.env)!;
        const done = await waitForSet(server, id, 240_000);
        const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
        assert.deepEqual(members.map((m) => m.name).sort(), [...expected.keys()].sort(), 'the same cases, named file › describe › title');
        for (const m of members) {
          const want = expected.get(m.name)!;
          const why = `${m.name}: runset ${JSON.stringify(m)} vs direct ${JSON.stringify(want)}`;
          assert.equal(m.status, want.status === 'unexpected' ? 'FAIL' : 'SUCCESS', why);
          assert.equal(m.flaky, want.status === 'flaky', why);
          if (want.status !== 'skipped') assert.equal(m.attempts, want.attempts, why);
          if (want.status === 'unexpected') assert.ok(want.error && m.error?.includes(want.error), why);
          else assert.equal(m.error, null, why);
        }
        assert.equal(done.status, 'FAIL');
        assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 5, FAIL: 1 });
        const passes = members.find((m) => m.name.endsWith('group › passes'));
        assert.match(passes?.output ?? '', /hello from passes/, 'console output reaches its member');
      });
    }
  }
});

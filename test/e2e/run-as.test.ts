/**
 * `--run-as USER` end to end, on PostgreSQL when RUNSET_TEST_DATABASE_URL is set
 * (so a real database URL is among the credentials), else SQLite: a command test
 * dumps its environment, its parent's /proc/<pid>/environ and the worker's, and
 * none of the worker's credentials shows; a Playwright suite passes with the
 * runner and its browser running as that user; a pytest test that names as its
 * attachments a file of its own and one only root may read gets the first kept
 * and the second refused. Needs root (setuid); creates the user `runset-test`
 * when it is missing.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newToken } from '../../src/auth/keys.js';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { dropSchemas, newSchemaName, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { chromiumMissing } from './playwright-fixtures.js';
import { PYTHON, pytestVersion } from './framework-fixtures-pytest.js';

/** Why pytest cannot run here (Debian's python3-pytest missing), or false. */
const pytestMissing = (): string | false => {
  const found = pytestVersion();
  return 'missing' in found ? found.missing : false;
};

const USER = 'runset-test';
const SECRET_KEY = 'secret-key-the-tests-must-never-see';
const PG_PASSWORD = 'pg-password-the-tests-must-never-see';
const WORKER_KEY = newToken();

/** Why this cannot run here, or undefined once the user exists. */
function cannotRun(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root: only root may start tests as another user (--run-as)';
  try {
    execFileSync('id', ['-u', USER], { stdio: 'ignore' });
    return undefined;
  } catch {
    // not there yet
  }
  try {
    execFileSync('useradd', ['--system', '--no-create-home', USER], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `cannot create the user ${USER}: ${(error as Error).message}`;
  }
}

/** What the command test prints: who it is, its environment, then what it could read of others. */
const DUMP = `
echo "uid=$(id -u)"
echo "--- env"; env
echo "--- parent $PPID"; if tr '\\0' '\\n' < /proc/$PPID/environ; then echo "parent environ: READ"; else echo "parent environ: refused"; fi
echo "--- worker $WORKER_PID"; if tr '\\0' '\\n' < /proc/$WORKER_PID/environ; then echo "worker environ: READ"; else echo "worker environ: refused"; fi
echo "--- worker cmdline"; tr '\\0' ' ' < /proc/$WORKER_PID/cmdline; echo
if ls "$DATA_DIR" >/dev/null 2>&1; then echo "data dir: READ"; else echo "data dir: refused"; fi
`;

const SPEC = `
import { test, expect } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
test('runs as the test user', async ({ page }) => {
  expect(process.env.EXPECTED_UIDS.split(',').map(Number)).toContain(process.getuid());
  expect(() => readFileSync('/proc/' + process.env.WORKER_PID + '/environ')).toThrow(/EACCES/);
  await page.setContent('<h1>isolated</h1>');
  await expect(page.locator('h1')).toHaveText('isolated');
  // Every browser process this run started runs as the test user too.
  const owners = readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).flatMap((p) => {
    try {
      if (!readFileSync('/proc/' + p + '/cmdline', 'latin1').includes('--runset-run-as-marker')) return [];
      return [Number(/^Uid:\\s+(\\d+)/m.exec(readFileSync('/proc/' + p + '/status', 'utf8'))?.[1])];
    } catch { return []; }
  });
  expect(owners.length).toBeGreaterThan(0);
  expect(new Set(owners)).toEqual(new Set([process.getuid()]));
});
`;

/** Environment B: its shell (holding B_SECRET) says where it is, and stays a while. */
const HOLD_SECRET = 'echo $$ > "$B_PID_FILE.tmp" && mv "$B_PID_FILE.tmp" "$B_PID_FILE"; sleep 4';
/** Environment A, at the same time on the same worker: tries to read B's environment. */
const PEEK = `for i in $(seq 200); do [ -f "$B_PID_FILE" ] && break; sleep 0.05; done
pid=$(cat "$B_PID_FILE") || exit 2
echo "uid=$(id -u) peeks at $pid"
if tr '\\0' '\\n' < /proc/$pid/environ | grep -q '^B_SECRET='; then echo "B environ: READ"; else echo "B environ: refused"; fi
if grep -q '^Uid:' /proc/$pid/status; then echo "B still running"; fi`;

/** pytest: attaches a file it wrote, and one it cannot read (the worker could). */
const PYTEST = `
def test_attaches(tmp_path):
    mine = tmp_path / "mine.txt"
    mine.write_text("written by the test")
    print(f"[[ATTACHMENT|{mine}]]")
    print("[[ATTACHMENT|ROOT_ONLY]]")
`;

after(() => assertNoLeakedServers());

describe('--run-as: tests never see the worker\'s credentials', { skip: cannotRun() }, () => {
  let server: RunningServer;
  const schema = newSchemaName('runset_runas');
  const uid = (name = USER) => Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  /** The slot users runset made for --workers 2. */
  const slotUids = () => [uid(`${USER}-1`), uid(`${USER}-2`)];

  before(async () => {
    // The suite must be readable by the test user: its folders are made 0755 here (a temp dir is 0700).
    const dir = tempDir('runset-runas-');
    mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
    writeFileSync(path.join(dir, 'dump.sh'), DUMP);
    writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: 'tests', timeout: 15_000, use: { launchOptions: { args: ['--runset-run-as-marker'] } } });\n");
    writeFileSync(path.join(dir, 'suite', 'tests', 'who.spec.ts'), SPEC);
    const rootOnly = path.join(dir, 'root-only.txt');
    writeFileSync(rootOnly, 'only root reads this', { mode: 0o600 });
    mkdirSync(path.join(dir, 'pysuite'));
    writeFileSync(path.join(dir, 'pysuite', 'test_files.py'), PYTEST.replace('ROOT_ONLY', rootOnly));
    for (const folder of [dir, path.join(dir, 'suite'), path.join(dir, 'suite', 'tests'), path.join(dir, 'pysuite')]) chmodSync(folder, 0o755);
    // Where the right environment's test leaves its pid for the left's: any slot user may write there.
    const shared = path.join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const dataDir = path.join(dir, 'data');
    const config = [
      'environments:',
      `  dump: { variables: { WORKER_PID: "0", DATA_DIR: "${dataDir}" } }`,
      '  browser: { variables: { WORKER_PID: "0", EXPECTED_UIDS: "0" } }',
      `  left: { variables: { B_PID_FILE: "${path.join(shared, 'b.pid')}" } }`,
      `  right: { variables: { B_PID_FILE: "${path.join(shared, 'b.pid')}", B_SECRET: "b-secret-of-the-right-environment" } }`,
      '  files: { variables: { WORKER_PID: "0" } }',
      'tests:',
      `  - { name: dump, type: command, run: [sh, ${path.join(dir, 'dump.sh')}], environments: [dump] }`,
      '  - { name: who, type: playwright, dir: suite, environments: [browser] }',
      `  - { name: holds, type: command, run: [sh, -c, ${JSON.stringify(HOLD_SECRET)}], environments: [right] }`,
      `  - { name: peeks, type: command, run: [sh, -c, ${JSON.stringify(PEEK)}], environments: [left] }`,
      ...(pytestMissing() ? [] : [`  - { name: py, type: pytest, dir: pysuite, python: ${PYTHON}, environments: [files] }`]),
      '',
    ].join('\n');
    writeFileSync(path.join(dir, 'runset.config.yaml'), config);
    const store: Record<string, string> = TEST_DATABASE_URL ? { RUNSET_DATABASE_URL: TEST_DATABASE_URL, RUNSET_DATABASE_SCHEMA: schema } : {};
    server = await startRunset({
      configPath: path.join(dir, 'runset.config.yaml'),
      dataDir,
      args: ['--run-as', USER, '--workers', '2'],
      env: {
        ...store,
        RUNSET_SECRET_KEY: SECRET_KEY,
        RUNSET_API_KEY: WORKER_KEY,
        PGPASSWORD: PG_PASSWORD,
        // A copy under a name of the operator's own: caught by its value.
        APP_SIGNING_KEY: SECRET_KEY,
      },
    });
  });

  after(async () => {
    await server?.stop();
    if (TEST_DATABASE_URL) await dropSchemas(TEST_DATABASE_URL, [schema]);
  });

  const runSet = async (env: string, envOverride: Record<string, string> = { WORKER_PID: String(server.proc.pid) }) => {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env, envOverride } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.testRunSetId as string;
    const done = await waitForSet(server, id, 60_000);
    const runs = await api<{ testRuns: Array<{ status: string; error: string | null; output: string | null; artifacts: Array<{ name: string; url: string }> }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    return { status: done.status, runs: runs.body.testRuns };
  };

  test('a command sees none of the credentials, and cannot read its parent\'s or the worker\'s environment', async () => {
    const { status, runs } = await runSet('dump');
    const output = runs[0]?.output ?? '';
    assert.equal(status, 'SUCCESS', `${runs[0]?.error}\n${output}`);
    const ran = Number(/^uid=(\d+)$/m.exec(output)?.[1]);
    assert.ok(slotUids().includes(ran), `the command ran as a slot user (${slotUids().join(', ')}), not ${ran}`);
    assert.match(output, /^HOME=\//m);
    assert.match(output, /^USER=runset-test-[12]$/m);
    assert.match(output, /^parent environ: refused$/m);
    assert.match(output, /^worker environ: refused$/m);
    assert.match(output, /^data dir: refused$/m, 'the data dir (store, secret.key, artifacts) is root\'s alone');
    const credentials = { 'the API key': server.apiKey, 'the worker key': WORKER_KEY, 'the secret key': SECRET_KEY, 'the PostgreSQL password': PG_PASSWORD };
    if (TEST_DATABASE_URL) Object.assign(credentials, { 'the database URL': TEST_DATABASE_URL });
    for (const [what, value] of Object.entries(credentials)) assert.ok(!output.includes(value), `${what} is not in the test's view:\n${output}`);
    assert.doesNotMatch(output, /^RUNSET_(DATABASE_URL|SECRET_KEY|API_KEY|BOOTSTRAP_KEY)=/m);
  });

  test('two tests running at once on one worker, of two environments, cannot read each other\'s environment', async () => {
    const right = runSet('right', {});
    const left = await runSet('left', {});
    const held = await right;
    assert.equal(held.status, 'SUCCESS', `${held.runs[0]?.error}\n${held.runs[0]?.output}`);
    const output = left.runs[0]?.output ?? '';
    assert.equal(left.status, 'SUCCESS', `${left.runs[0]?.error}\n${output}`);
    assert.match(output, /^B still running$/m, `B ran while A peeked: ${output}`);
    assert.match(output, /^B environ: refused$/m, output);
    assert.doesNotMatch(output, /b-secret-of-the-right-environment/);
  });

  test('a Playwright suite passes, its runner and browser running as the test user', { skip: chromiumMissing() }, async () => {
    const { status, runs } = await runSet('browser', { WORKER_PID: String(server.proc.pid), EXPECTED_UIDS: slotUids().join(',') });
    assert.equal(status, 'SUCCESS', runs.map((r) => `${r.error}\n${r.output}`).join('\n'));
  });

  test('a test\'s attachments are kept only when the test user could read them itself', { skip: pytestMissing() }, async () => {
    const { status, runs } = await runSet('files');
    const run = runs[0];
    assert.equal(status, 'SUCCESS', `${run?.error}\n${run?.output}`);
    assert.deepEqual(run?.artifacts.map((a) => a.name), ['mine.txt']);
    const res = await fetch(server.url.replace(/\/api$/, '') + run.artifacts[0]!.url, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(await res.text(), 'written by the test');
    assert.match(run?.output ?? '', /artifact root-only\.txt not kept: the user tests run as cannot read it/);
  });
});

/**
 * What a test process gets from its worker (src/executors/environment.ts), whom
 * it runs as (src/executors/run-as.ts), and the options that set both
 * (--run-as, --key-file, --pool-size).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { credentialValues, scrubbedEnvironment, suiteBinPath, suiteEnvironment, testEnvironment } from '../../src/executors/environment.js';
import { lookUpRunAsUser, spawnAs, type RunAsUser } from '../../src/executors/run-as.js';
import { createCommandExecutor } from '../../src/executors/command/index.js';
import { parseRunAs, readApiKey } from '../../src/config/isolation.js';
import { compileServeOptions, type RawServeFlags } from '../../src/cli/serve.js';

const dir = mkdtempSync(path.join(tmpdir(), 'runset-isolation-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const USER: RunAsUser = { name: 'tester', uid: 4321, gid: 4322, groups: [], home: '/home/tester' };

describe('the environment of a test process', () => {
  const worker: NodeJS.ProcessEnv = {
    PATH: '/usr/bin',
    HOME: '/root',
    RUNSET_DATABASE_URL: 'postgres://runset:db-password-1@db/runset',
    RUNSET_SECRET_KEY: 'the-secret-key',
    RUNSET_API_KEY_FILE: '/etc/runset/key',
    RUNSET_ANYTHING: 'x',
    PGPASSWORD: 'db-password-1',
    DATABASE_URL: 'postgres://runset:db-password-1@db/runset',
    LEGACY_PASS: 'db-password-1',
    APP_SETTING: 'kept',
  };
  const credentials = credentialValues([worker.RUNSET_DATABASE_URL, worker.RUNSET_SECRET_KEY, undefined, 'short']);

  test('the credentials a worker holds: each value and a database URL\'s password; too short ones are ignored', () => {
    assert.deepEqual(credentials.sort(), ['db-password-1', 'postgres://runset:db-password-1@db/runset', 'the-secret-key'].sort());
  });

  test('drops every RUNSET_* variable, PGPASSWORD, and any variable holding a credential, whatever its name', () => {
    assert.deepEqual(scrubbedEnvironment({ credentials }, worker), { PATH: '/usr/bin', HOME: '/root', APP_SETTING: 'kept' });
  });

  test('the set\'s variables arrive as given, even one equal to a credential (the suite passes it deliberately)', () => {
    const env = testEnvironment({ GREETING: 'hi', TOKEN: 'the-secret-key' }, { credentials }, worker);
    assert.deepEqual(env, { PATH: '/usr/bin', HOME: '/root', APP_SETTING: 'kept', GREETING: 'hi', TOKEN: 'the-secret-key' });
  });

  test('under --run-as the user\'s HOME, USER and LOGNAME replace the worker\'s', () => {
    const env = testEnvironment({}, { runAs: USER }, { HOME: '/root', USER: 'root', PATH: '/bin' });
    assert.deepEqual(env, { HOME: '/home/tester', USER: 'tester', LOGNAME: 'tester', PATH: '/bin' });
  });

  test('a process in a suite\'s folder finds the suite\'s tools first: its node_modules/.bin and each above it, as npm does', () => {
    assert.equal(suiteBinPath('/srv/suite/e2e', '/usr/bin:/bin'), '/srv/suite/e2e/node_modules/.bin:/srv/suite/node_modules/.bin:/srv/node_modules/.bin:/node_modules/.bin:/usr/bin:/bin');
    assert.equal(suiteBinPath('/srv/', undefined), '/srv/node_modules/.bin:/node_modules/.bin');
    const env = suiteEnvironment('/srv/suite', { GREETING: 'hi' });
    assert.equal(env.GREETING, 'hi');
    assert.equal(env.PATH, suiteBinPath('/srv/suite', process.env.PATH));
  });
});

describe('starting a process as another user', () => {
  test('without a user: as this process; with one: uid and gid; with supplementary groups: through setpriv', () => {
    assert.deepEqual(spawnAs(undefined, 'node', ['a']), { file: 'node', args: ['a'] });
    assert.deepEqual(spawnAs(USER, 'node', ['a']), { file: 'node', args: ['a'], uid: 4321, gid: 4322 });
    const grouped = spawnAs({ ...USER, groups: [27, 100] }, 'node', ['a']);
    assert.match(grouped.file, /setpriv$/);
    assert.deepEqual(grouped.args, ['--reuid=4321', '--regid=4322', '--groups=27,100', '--', 'node', 'a']);
    assert.equal(grouped.uid, undefined, 'setpriv starts as root and drops to the user itself');
  });

  test('refusals say why and what is accepted', () => {
    assert.throws(() => lookUpRunAsUser('nobody', 1000), /^Error: runset must run as root to start tests as "nobody" \(setuid needs root\); it runs as uid 1000/);
    assert.throws(() => lookUpRunAsUser('runset-no-such-user', 0), /^Error: no user "runset-no-such-user" on this machine; expected a user name or uid of an existing non-root user/);
    assert.throws(() => lookUpRunAsUser('root', 0), /^Error: "root" is root: tests run as root can read everything the worker holds/);
    assert.throws(() => lookUpRunAsUser('a b', 0), /is not a user name/);
    assert.throws(() => parseRunAs('runset-no-such-user'), /^Error: --run-as \(RUNSET_RUN_AS\): /);
    assert.equal(parseRunAs(''), undefined);
  });

  test('a user from the user database: ids, groups and home', { skip: process.getuid?.() === 0 ? false : 'needs root' }, () => {
    const nobody = lookUpRunAsUser('nobody');
    assert.equal(nobody.uid, Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })));
    assert.equal(nobody.name, 'nobody');
    assert.ok(!nobody.groups.includes(nobody.gid), 'the primary group is not repeated');
    assert.equal(lookUpRunAsUser(String(nobody.uid)).name, 'nobody', 'a numeric uid works too');
  });

  test('a command run as another user is that user, and an abort still kills its whole tree', { skip: process.getuid?.() === 0 ? false : 'needs root' }, async () => {
    const nobody = lookUpRunAsUser('nobody');
    const executor = createCommandExecutor({ runAs: nobody });
    const spec = (run: string[]) => ({ name: 'c', type: 'command' as const, run, cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 });
    const who = await executor.run(spec(['sh', '-c', 'id -u; echo $HOME']), { variables: {}, signal: new AbortController().signal });
    assert.equal(who.output, `${nobody.uid}\n${nobody.home}\n`);

    const pidFile = path.join(dir, 'grandchild.pid');
    writeFileSync(pidFile, '');
    chmodSync(dir, 0o777);
    chmodSync(pidFile, 0o666);
    const controller = new AbortController();
    const running = executor.run(spec(['sh', '-c', `sleep 30 & echo $! > ${pidFile}; wait`]), { variables: {}, signal: controller.signal });
    let grandchild = 0;
    for (let i = 0; i < 250 && !grandchild; i++, await sleep(20)) grandchild = Number(readFileSync(pidFile, 'utf8')) || 0;
    assert.ok(grandchild > 0, 'the grandchild started');
    controller.abort('stop');
    assert.equal((await running).error, 'aborted: stop');
    for (let i = 0; i < 100 && alive(grandchild); i++) await sleep(20);
    assert.ok(!alive(grandchild), 'the grandchild was killed');
  });
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('the worker\'s key and pool options', () => {
  const key = 'rs_key-that-must-never-be-printed';

  test('--key-file wins over RUNSET_API_KEY, its first line trimmed; errors name the file, never the key', () => {
    const file = path.join(dir, 'key');
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    assert.equal(readApiKey(file, 'rs_from-env', undefined), key);
    assert.equal(readApiKey(undefined, 'rs_from-env', undefined), 'rs_from-env');
    assert.equal(readApiKey(undefined, '', undefined), undefined);
    assert.throws(() => readApiKey(path.join(dir, 'absent'), undefined, undefined), /^Error: --key-file \(RUNSET_API_KEY_FILE\): cannot read .*absent \(ENOENT\); expected a file holding the worker's key/);
    writeFileSync(path.join(dir, 'empty'), '\n');
    assert.throws(() => readApiKey(path.join(dir, 'empty'), undefined, undefined), /is empty; expected the worker's key/);
    chmodSync(file, 0o644);
    const refused = (() => {
      try {
        readApiKey(file, undefined, USER);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    assert.match(refused, /can be read by --run-as's user tester; make it readable by runset's user alone \(chmod 600/);
    assert.ok(!refused.includes(key), 'the key is never in a message');
  });

  const flags: RawServeFlags = { config: 'c.yaml', port: '0', host: '127.0.0.1', dataDir: '.runset', databaseSchema: 'runset', lease: '30s', grace: '30s', setsPerMinute: '60', logLevel: 'warn' };
  test('--pool-size: a worker\'s default is its slots + 1; serve keeps the store\'s; a bad value names the option', () => {
    assert.equal(compileServeOptions({ ...flags, workers: '3' }, { api: false }).poolSize, 4);
    assert.equal(compileServeOptions({ ...flags, workers: '3', poolSize: '2' }, { api: false }).poolSize, 2);
    assert.equal(compileServeOptions({ ...flags, poolSize: '10' }, { api: true }).poolSize, 10);
    assert.throws(() => compileServeOptions({ ...flags, poolSize: '0' }, { api: false }), /^Error: --pool-size \(RUNSET_POOL_SIZE\) must be a whole number from 1 to 1000, got "0"/);
  });
});

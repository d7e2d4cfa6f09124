/**
 * `runset trigger` in-process (runTriggerCommand) against the scripted fake
 * server: exit codes, retries, timeouts, stdout discipline. Reports and GitHub
 * integration are in trigger-reports.test.ts; the spawned CLI in cli.test.ts.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import {
  assertNoLeakedFakeServers,
  collector,
  created,
  problem,
  sequence,
  SET_ID,
  startFakeServer,
  statusReply,
  type FakeServer,
  type Routes,
} from './fake-server.js';

after(assertNoLeakedFakeServers);

export const KEY = 'rs_test_0123456789abcdefSECRETKEY';

async function trigger(server: FakeServer | { url: string }, argv: string[], env: Record<string, string> = {}) {
  const io = collector();
  const code = await runTriggerCommand(argv, { RUNSET_URL: server.url, RUNSET_API_KEY: KEY, ...env }, io);
  return { code, out: io.out(), err: io.err() };
}

async function withServer<T>(routes: Routes, body: (server: FakeServer) => Promise<T>): Promise<T> {
  const server = await startFakeServer(routes);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

const FAST = ['--interval', '50ms'];

/** The status reads of a wait: not its members' list at the end, nor the details it reads for a queue place. */
function statusReads(server: FakeServer) {
  return server.requests.filter((req) => req.method === 'GET' && !req.path.endsWith('/test-runs') && !req.path.endsWith('/details'));
}

test('without --wait: stdout holds only the id, and the request carries key, body and Idempotency-Key', async () => {
  await withServer({}, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--override', 'BASE_URL=https://pr-1.example.com/?a=b', '--override', 'X=']);
    assert.equal(r.code, 0);
    assert.equal(r.out, `${SET_ID}\n`);
    assert.match(r.err, /created test run set/);
    const [create] = server.requests;
    assert.equal(create?.headers.authorization, `Bearer ${KEY}`);
    assert.match(String(create?.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    assert.deepEqual(JSON.parse(create?.body ?? ''), { env: 'staging', envOverride: { BASE_URL: 'https://pr-1.example.com/?a=b', X: '' } });
    assert.equal(server.requests.length, 1, 'no polling without --wait');
  });
});

test('without --wait, --json prints the creation result as JSON', async () => {
  await withServer({}, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--json']);
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.out), { testRunSetId: SET_ID });
  });
});

test('transient 503s and a dropped connection at create are retried with the same Idempotency-Key', async () => {
  const routes: Routes = { create: sequence(problem(503, 'internal', 'starting'), { destroy: true }, created()) };
  await withServer(routes, async (server) => {
    const r = await trigger(server, ['--env', 'staging', ...FAST]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `${SET_ID}\n`);
    assert.equal(server.requests.length, 3);
    const keys = new Set(server.requests.map((req) => req.headers['idempotency-key']));
    assert.equal(keys.size, 1, 'one Idempotency-Key for every attempt');
    assert.match(r.err, /retrying in/);
  });
});

test('401 at create is final: exit 3, no retry, the reason names RUNSET_API_KEY', async () => {
  await withServer({ create: () => problem(401, 'unauthorized', 'Missing or invalid API key', { 'www-authenticate': 'Bearer' }) }, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 3);
    assert.equal(r.out, '');
    assert.equal(server.requests.length, 1);
    assert.match(r.err.trim().split('\n').at(-1) ?? '', /401.*RUNSET_API_KEY.*\(exit 3\)$/);
  });
});

test('400 at create is final and shows the server detail', async () => {
  await withServer({ create: () => problem(400, 'unknown_environment', 'No environment "stagin"; known: staging, prod') }, async (server) => {
    const r = await trigger(server, ['--env', 'stagin']);
    assert.equal(r.code, 3);
    assert.match(r.err, /known: staging, prod/);
    assert.equal(server.requests.length, 1);
  });
});

test('an unreachable server at create: retried within --timeout, then exit 3', async () => {
  const server = await startFakeServer();
  const url = server.url;
  await server.close();
  const started = Date.now();
  const r = await trigger({ url }, ['--env', 'staging', '--timeout', '400ms', ...FAST]);
  assert.equal(r.code, 3);
  assert.ok(Date.now() - started < 3000, 'gives up around --timeout');
  assert.match(r.err, /could not create the test run set \(gave up retrying within --timeout\)/);
  assert.match(r.err, /Server unreachable/);
});

test('missing RUNSET_API_KEY or RUNSET_URL: exit 3 naming the variable, no request', async () => {
  await withServer({}, async (server) => {
    const noKey = collector();
    assert.equal(await runTriggerCommand(['--env', 'x'], { RUNSET_URL: server.url }, noKey), 3);
    assert.match(noKey.err(), /RUNSET_API_KEY is not set/);
    const noUrl = collector();
    assert.equal(await runTriggerCommand(['--env', 'x'], { RUNSET_API_KEY: KEY }, noUrl), 3);
    assert.match(noUrl.err(), /RUNSET_URL is not set/);
    assert.equal(server.requests.length, 0);
  });
});

test('usage errors exit 3: missing --env, an override without "=", a bad duration, --junit without --wait', async () => {
  await withServer({}, async (server) => {
    const cases: Array<[string[], RegExp]> = [
      [[], /--env/],
      [['--env', 'x', '--override', 'NOEQUALS'], /expected K=V/],
      [['--env', 'x', '--override', '=v'], /expected K=V/],
      [['--env', 'x', '--interval', 'soon'], /expected a number of seconds, or a number followed by ms, s, m/],
      [['--env', 'x', '--timeout', '0'], /longer than 0/],
      [['--env', 'x', '--junit', 'out.xml'], /--junit needs --wait/],
    ];
    for (const [argv, message] of cases) {
      const r = await trigger(server, argv);
      assert.equal(r.code, 3, argv.join(' '));
      assert.match(r.err, message);
      assert.equal(r.out, '');
    }
    assert.equal(server.requests.length, 0);
  });
});

test('--wait keeps polling through unknown status values until SUCCESS: exit 0', async () => {
  const routes: Routes = {
    status: sequence(statusReply('WAITING', { WAITING: 2 }), statusReply('QUEUED_FOR_GPU', { WAITING: 2 }), statusReply('RUNNING', { RUNNING: 1, SUCCESS: 1 }), statusReply('SUCCESS', { SUCCESS: 2 })),
  };
  await withServer(routes, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, '', 'stdout stays empty with --wait and without --json');
    assert.equal(statusReads(server).length, 4);
    assert.match(r.err, /QUEUED_FOR_GPU/);
    assert.match(r.err, /SUCCESS: 2 of 2 tests passed \(exit 0\)\n$/);
  });
});

test('a FAIL set exits 1 and lists the failed tests with their errors', async () => {
  const { membersReply } = await import('./fake-server.js');
  const routes: Routes = {
    status: sequence(statusReply('RUNNING', { RUNNING: 2 }), statusReply('FAIL', { SUCCESS: 1, FAIL: 1 })),
    members: () => membersReply([{ name: 'home', status: 'SUCCESS' }, { name: 'checkout', status: 'FAIL', error: 'expected 200, got 500' }]),
  };
  await withServer(routes, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 1);
    assert.match(r.err, /✗ checkout \[command\]: expected 200, got 500/);
    assert.match(r.err, /FAIL: 1 of 2 tests failed \(exit 1\)\n$/);
  });
});

test('503s and a 429 with Retry-After while polling are retried; Retry-After is honoured', async () => {
  const routes: Routes = {
    status: sequence(
      statusReply('RUNNING', { RUNNING: 1 }),
      problem(503, 'internal', 'db restarting'),
      problem(429, 'rate_limited', 'slow down', { 'retry-after': '0.4' }),
      statusReply('SUCCESS', { SUCCESS: 1 }),
    ),
  };
  await withServer(routes, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 0, r.err);
    const polls = statusReads(server);
    assert.equal(polls.length, 4);
    const gap = (polls[3]?.at ?? 0) - (polls[2]?.at ?? 0);
    assert.ok(gap >= 380, `waited ${gap}ms after Retry-After: 0.4`);
    assert.match(r.err, /429 .*retrying in 400ms/);
  });
});

test('a set that never ends: exit 2 soon after a short --timeout', async () => {
  await withServer({ status: () => statusReply('RUNNING', { RUNNING: 3 }) }, async (server) => {
    const started = Date.now();
    const r = await trigger(server, ['--env', 'staging', '--wait', '--timeout', '300ms', ...FAST, '--json']);
    const took = Date.now() - started;
    assert.equal(r.code, 2);
    assert.ok(took >= 280 && took < 2500, `took ${took}ms`);
    assert.match(r.err, /timed out after --timeout 300ms: test run set .* still RUNNING, 3 of 3 tests not finished \(exit 2\)\n$/);
    assert.equal((JSON.parse(r.out) as { status: string }).status, 'RUNNING', '--json prints the last status read');
  });
});

test('slow answers are waited for (below the per-request limit), and a hung answer cannot outlive --timeout', async () => {
  const slow: Routes = { create: () => ({ ...created(), delayMs: 150 }), status: sequence({ ...statusReply('RUNNING'), delayMs: 200 }, { ...statusReply('SUCCESS', { SUCCESS: 1 }), delayMs: 200 }) };
  await withServer(slow, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 0, r.err);
  });
  await withServer({ status: () => ({ ...statusReply('SUCCESS'), delayMs: 5000 }) }, async (server) => {
    const started = Date.now();
    const r = await trigger(server, ['--env', 'staging', '--wait', '--timeout', '300ms', ...FAST]);
    assert.equal(r.code, 2);
    assert.ok(Date.now() - started < 2500);
  });
});

test('404, 401 and 403 while polling are final: exit 3', async () => {
  for (const [status, code] of [
    [404, 'not_found'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
  ] as const) {
    const routes: Routes = { status: sequence(statusReply('RUNNING', { RUNNING: 1 }), problem(status, code, 'nope')) };
    await withServer(routes, async (server) => {
      const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
      assert.equal(r.code, 3, String(status));
      assert.equal(server.requests.filter((req) => req.method === 'GET' && !req.path.endsWith('/details')).length, 2, 'no retry after a final error');
      assert.match(r.err, new RegExp(`could not read test run set ${SET_ID}: ${status} `));
    });
  }
});

test('--json with --wait puts exactly the final status object on stdout', async () => {
  await withServer({ status: () => statusReply('FAIL', { FAIL: 1 }) }, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', '--json', ...FAST]);
    assert.equal(r.code, 1);
    const parsed = JSON.parse(r.out) as Record<string, unknown>;
    assert.deepEqual(parsed, statusReply('FAIL', { FAIL: 1 }).body);
  });
});

test('in a terminal, progress is one line rewritten in place', async () => {
  const routes: Routes = { status: sequence(statusReply('WAITING', { WAITING: 1 }), statusReply('RUNNING', { RUNNING: 1 }), statusReply('SUCCESS', { SUCCESS: 1 })) };
  await withServer(routes, async (server) => {
    const io = collector(true);
    const code = await runTriggerCommand(['--env', 'staging', '--wait', ...FAST], { RUNSET_URL: server.url, RUNSET_API_KEY: KEY }, io);
    assert.equal(code, 0);
    const clear = '\r\u001b[2K';
    assert.ok(io.err().includes(`${clear}runset: WAITING — 0 passed, 0 failed, 0 running, 1 waiting`), io.err());
    assert.ok(io.err().includes(`${clear}runset: RUNNING`));
  });
});

test('outside a terminal, one line per change (no carriage returns)', async () => {
  const same = statusReply('RUNNING', { RUNNING: 1 });
  await withServer({ status: sequence(same, same, same, statusReply('SUCCESS', { SUCCESS: 1 })) }, async (server) => {
    const r = await trigger(server, ['--env', 'staging', '--wait', ...FAST]);
    assert.equal(r.code, 0);
    assert.ok(!r.err.includes('\r'));
    assert.equal(r.err.match(/runset: RUNNING/g)?.length, 1, 'an unchanged status is printed once');
  });
});

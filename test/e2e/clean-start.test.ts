/**
 * A newcomer's first screen: `runset serve` writes nothing to stderr but its own
 * `runset:` lines — no deprecation warning from a dependency (Fastify's
 * FSTDEP022 came from an option set where Fastify 5 no longer reads it).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoLeakedServers, startRunset } from '../helpers/server.js';

after(() => assertNoLeakedServers());

test('serve prints no warning before or after its start line: stderr holds only runset\'s own lines', async () => {
  const server = await startRunset({ config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n' });
  // A request goes through the router, where Fastify reads its router options.
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  assert.equal(await server.stop(), 0);
  const lines = server.stderr().split('\n').filter((line) => line !== '');
  assert.ok(lines.length > 0, 'the start line is on stderr');
  assert.deepEqual(lines.filter((line) => !line.startsWith('runset: ')), [], server.stderr());
  assert.doesNotMatch(server.logs(), /Warning|FSTDEP/);
});

/**
 * Hostile suite uploads against a real `runset serve` (SQLite, its workers in
 * the same process, as the crash was): 300 entries of 1 MB paths, a
 * trailing-zero bomb, bombs under the compression ratio and a tar gzipped
 * twice are each refused with a 422 naming the limit, nothing is stored, the
 * process lives on and its /api/health keeps answering (a functional check
 * with a generous bound; bench:uploads measures the 250 ms budget). Also the
 * words of a wrong media type and of a malformed suite id.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startRunset, type RunningServer } from '../helpers/server.js';
import { gzippedTwice, longPaths, trailingBomb, type HostileArchive } from '../helpers/hostile-archives.js';

let server: RunningServer;

before(async () => {
  server = await startRunset({ config: 'environments:\n  preview: { allowSuiteUploads: true }\ntests: []\n', args: ['--workers', '2'] });
});
after(async () => {
  await server?.stop();
});

async function upload(archive: HostileArchive, contentType = 'application/gzip'): Promise<{ status: number; body: { code?: string; title?: string; detail?: string } }> {
  const res = await fetch(`${server.url}/v0/suites/${archive.id}`, { method: 'PUT', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': contentType }, body: archive.bytes });
  return { status: res.status, body: (await res.json()) as { code?: string; title?: string; detail?: string } };
}

/** Polls /api/health every 50 ms until stopped; answers the longest wait for an answer, ms. */
function pollHealth(): { stop: () => Promise<number> } {
  let longest = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${server.url}/health`);
      longest = Math.max(longest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return longest;
    },
  };
}

test('hostile archives one after another: each a 422 naming its limit, nothing stored, health answering', { timeout: 120_000 }, async () => {
  const hostile: Array<[string, HostileArchive, RegExp]> = [
    ['300 paths of 1 MB', await longPaths(300, 1024 * 1024), /an extended header is at most 65536 bytes \(a path is at most 1024\)/],
    ['2,000-byte paths', await longPaths(50, 2000), /a path is at most 1024 bytes/],
    ['24 MiB of zeros after the end marker', trailingBomb(24), /the compression ratio limit is 200:1/],
    ['24 MiB with 96 random bytes a MiB', trailingBomb(24, 96), /data after its end-of-archive marker/],
    ['a bomb under the ratio', trailingBomb(48, 8192), /data after its end-of-archive marker/],
    ['a tar gzipped twice', gzippedTwice(), /compressed again/],
  ];
  const health = pollHealth();
  for (const [what, archive, limit] of hostile) {
    const answer = await upload(archive);
    assert.equal(answer.status, 422, `${what}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.code, 'suite_refused', what);
    assert.match(answer.body.detail ?? '', limit, what);
  }
  const longest = await health.stop();
  assert.ok(longest < 1000, `/api/health answered within 1 s throughout (longest wait ${Math.round(longest)} ms)`);
  assert.equal(server.proc.exitCode, null, 'the API process lives on');
  assert.deepEqual((await api<{ versions: unknown[] }>(server, 'GET', '/v0/suites')).body.versions, [], 'nothing was stored');
});

test('an upload with another media type is refused in words that name the archive\'s type, not JSON', async () => {
  const answer = await upload(gzippedTwice(), 'text/plain');
  assert.equal(answer.status, 415);
  assert.equal(answer.body.code, 'unsupported_media_type');
  assert.doesNotMatch(answer.body.title ?? '', /application\/json/);
  assert.equal(answer.body.title, 'Request body is not of a media type this route takes');
  assert.match(answer.body.detail ?? '', /content type "text\/plain" is not accepted; send Content-Type: application\/gzip or /);
});

test('a malformed suite id says what a suite id is (its SHA-256 in hex), not a UUID', async () => {
  const answer = await api<{ code: string; detail: string }>(server, 'GET', '/v0/suites/3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f');
  assert.equal(answer.status, 400);
  assert.equal(answer.body.code, 'invalid_id');
  assert.doesNotMatch(answer.body.detail, /UUID/);
  assert.match(answer.body.detail, /^id is malformed; expected A suite version's id: the SHA-256 \(lowercase hex\) of its archive/);
});

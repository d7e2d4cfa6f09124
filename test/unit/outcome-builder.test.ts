/**
 * The one outcome builder (src/scheduler/outcome-builder.ts): what a single
 * member's and a batch case's outcome say.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ArtifactSaver } from '../../src/artifacts/save.js';
import type { ArtifactFile, NewArtifact } from '../../src/core/types.js';
import { buildOutcome, failedBeforeStart, oneLine, tail } from '../../src/scheduler/outcome-builder.js';

const ended = { passed: false, error: 'bad token s3cret\nat line 2', output: 'using s3cret', attempts: 2, durationMs: 12, artifacts: [] };

test('a failure: its error on one line, error and output with the secrets masked', async () => {
  const outcome = await buildOutcome(ended, { secrets: ['s3cret'] });
  assert.equal(outcome.status, 'FAIL');
  assert.equal(outcome.attempts, 2);
  assert.equal(outcome.durationMs, 12);
  assert.doesNotMatch(outcome.error!, /s3cret|\n/);
  assert.match(outcome.error!, /^bad token \S+ at line 2$/);
  assert.doesNotMatch(outcome.output, /s3cret/);
  assert.deepEqual(outcome.artifacts, []);
});

test('a pass has no error; a failure without one says "failed"', async () => {
  assert.equal((await buildOutcome({ ...ended, passed: true }, { secrets: [] })).error, null);
  assert.equal((await buildOutcome({ ...ended, error: null }, { secrets: [] })).error, 'failed');
});

test('a case its executor skipped passes marked skipped; a failure never is, and other passes carry no mark', async () => {
  const skipped = await buildOutcome({ ...ended, passed: true, error: null, skipped: true }, { secrets: [] });
  assert.equal(skipped.status, 'SUCCESS');
  assert.equal(skipped.skipped, true);
  assert.equal((await buildOutcome({ ...ended, skipped: true }, { secrets: [] })).skipped, undefined, 'a failed case is not skipped');
  assert.equal((await buildOutcome({ ...ended, passed: true }, { secrets: [] })).skipped, undefined);
});

test('output keeps its last 64 KiB; an error at most 1000 characters', async () => {
  const outcome = await buildOutcome({ ...ended, output: `${'x'.repeat(70_000)}the end` }, { secrets: [] });
  assert.equal(outcome.output.length, 64 * 1024);
  assert.ok(outcome.output.endsWith('the end'));
  assert.equal(tail('short'), 'short');
  assert.equal(oneLine('e'.repeat(2000)).length, 1000);
});

function fakeSaver(): ArtifactSaver & { saved: [readonly ArtifactFile[], readonly string[], string][] } {
  const saver = {
    saved: [] as [readonly ArtifactFile[], readonly string[], string][],
    save(files: readonly ArtifactFile[], secrets: readonly string[], workDir: string) {
      saver.saved.push([files, secrets, workDir]);
      const artifacts: NewArtifact[] = [{ id: 'a1', name: files[0]!.name, contentType: files[0]!.contentType, size: 1, location: 'file:a1' }];
      return Promise.resolve({ artifacts, notes: ['trace.zip was not kept: too large'] });
    },
    discard: () => Promise.resolve(),
  };
  return saver;
}

test('a case\'s files are stored from its scratch folder, with a note in the output for each not kept', async () => {
  const saver = fakeSaver();
  const files = [{ name: 'shot.png', contentType: 'image/png', path: '/work/b/shot.png' }];
  const outcome = await buildOutcome({ ...ended, artifacts: files }, { secrets: ['s3cret'], artifacts: saver, workDir: '/work/b' });
  assert.deepEqual(saver.saved, [[files, ['s3cret'], '/work/b']]);
  assert.deepEqual(outcome.artifacts?.map((a) => a.name), ['shot.png']);
  assert.match(outcome.output, /using \S+\ntrace\.zip was not kept: too large\n$/);
});

test('without a saver or a scratch folder nothing is stored', async () => {
  const saver = fakeSaver();
  const files = [{ name: 'shot.png', contentType: 'image/png', path: '/x/shot.png' }];
  assert.deepEqual((await buildOutcome({ ...ended, artifacts: files }, { secrets: [] })).artifacts, []);
  assert.deepEqual((await buildOutcome({ ...ended, artifacts: files }, { secrets: [], artifacts: saver })).artifacts, []);
  assert.equal(saver.saved.length, 0);
});

test('a member that failed before anything ran', () => {
  assert.deepEqual(failedBeforeStart('no executor\nhere', 3), { status: 'FAIL', attempts: 0, error: 'no executor here', output: '', durationMs: 3 });
});

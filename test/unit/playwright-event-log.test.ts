/** The reporter's event file, followed: every line, in order, none lost at close, partial lines held back. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { EventLog } from '../../src/executors/event-log.js';
import type { ReporterEvent } from '../../src/executors/playwright/reporter.js';
import { tempDir } from '../helpers/server.js';

test('events written synchronously arrive in order, the last ones at close; a torn line waits for its end', async () => {
  const file = path.join(tempDir('runset-events-'), 'events.jsonl');
  const got: ReporterEvent[] = [];
  const log = new EventLog<ReporterEvent>(file, (e) => got.push(e));
  const fd = openSync(file, 'a');
  const line = (i: number) => JSON.stringify({ type: 'output', key: null, text: `line ${i} ${'é'.repeat(i % 50)}` }) + '\n';
  for (let i = 0; i < 500; i++) writeSync(fd, line(i));
  await new Promise((resolve) => setTimeout(resolve, 250));
  assert.ok(got.length > 0, 'followed live, before close');
  const torn = line(500);
  writeSync(fd, torn.slice(0, 10));
  await new Promise((resolve) => setTimeout(resolve, 150)); // the torn half is seen and held back
  writeSync(fd, torn.slice(10));
  writeSync(fd, 'not json at all\n');
  for (let i = 501; i < 1000; i++) writeSync(fd, line(i));
  closeSync(fd);
  log.close();
  assert.equal(got.length, 1000, 'every event, none lost at the end, the foreign line ignored');
  got.forEach((e, i) => assert.equal(e.type === 'output' && e.text, `line ${i} ${'é'.repeat(i % 50)}`));
  log.close(); // idempotent
});

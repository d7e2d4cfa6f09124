/** What a tool result may carry of a long text: cut at the bound, with a note saying how much and where the whole is. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clip, firstLines } from '../../src/mcp/bounds.js';

test('clip keeps a short text whole and cuts a long one with the count and the link', () => {
  assert.deepEqual(clip('short', 10), { text: 'short', omitted: 0 });
  const cut = clip('x'.repeat(25), 10, 'https://runset.example.com/sets/1');
  assert.equal(cut.omitted, 15);
  assert.equal(cut.text, `${'x'.repeat(10)}\n… [15 more characters cut; the whole text: https://runset.example.com/sets/1]`);
});

test('firstLines keeps the first lines, says how many more there were, and stays under the character bound', () => {
  const text = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n');
  const head = firstLines(text, 3, 1000, 'https://runset.example.com/sets/1');
  assert.equal(head.text, 'line 1\nline 2\nline 3\n… [47 more lines cut; the whole output: https://runset.example.com/sets/1]');
  const long = firstLines(`${'y'.repeat(5000)}\nsecond`, 30, 100);
  assert.ok(long.text.startsWith(`${'y'.repeat(100)}\n… [4907 more characters cut]`), long.text.slice(0, 150));
  assert.deepEqual(firstLines('a\nb', 30, 100), { text: 'a\nb', omitted: 0 });
});

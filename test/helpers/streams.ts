/** Reading streams whole in tests. */
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';

/** Every byte of a stream that must be there (blob stores answer undefined for bytes that are gone). */
export async function bytesOf(stream: Readable | undefined): Promise<Buffer> {
  assert.ok(stream, 'the bytes are there');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

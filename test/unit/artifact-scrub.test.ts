/** Secrets never reach stored artifacts: the ZIP reader/writer and the masking of traces and text files. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { entryData, readZip, withData, writeZip, ZipFormatError, type ZipEntry } from '../../src/artifacts/zip.js';
import { scrubFile, scrubZip, secretVariants } from '../../src/artifacts/scrub.js';
import { tempDir } from '../helpers/server.js';

const SECRET = 'p@ss "w0rd"/ü';

function entry(name: string, text: string | Buffer, method = 8): ZipEntry {
  const data = typeof text === 'string' ? Buffer.from(text) : text;
  const base: ZipEntry = { name, method: 0, time: 0x6000, date: 0x5a21, crc: crc32(data) >>> 0, size: data.length, raw: data };
  return method === 8 ? withData(base, data) : base;
}

/** A ZIP as streaming writers (yazl, Playwright's) make it: sizes in a data descriptor after the data. */
function streamedZip(name: string, text: string): Buffer {
  const data = Buffer.from(text);
  const raw = deflateRawSync(data);
  const nameBytes = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0008, 6); // sizes follow the data
  local.writeUInt16LE(8, 8);
  local.writeUInt16LE(nameBytes.length, 26);
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(crc32(data) >>> 0, 4);
  descriptor.writeUInt32LE(raw.length, 8);
  descriptor.writeUInt32LE(data.length, 12);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(0x0008, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc32(data) >>> 0, 16);
  central.writeUInt32LE(raw.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  const body = Buffer.concat([local, nameBytes, raw, descriptor]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBytes.length, 12);
  end.writeUInt32LE(body.length, 16);
  return Buffer.concat([body, central, nameBytes, end]);
}

test('a ZIP written is read back entry for entry, stored and deflated alike', () => {
  const entries = [entry('trace.trace', '{"a":1}\n'), entry('resources/x.bin', Buffer.from([0, 1, 2, 255]), 0), entry('empty', '')];
  const back = readZip(writeZip(entries));
  assert.deepEqual(back.map((e) => [e.name, e.size, e.crc, e.time, e.date]), entries.map((e) => [e.name, e.size, e.crc, e.time, e.date]));
  assert.deepEqual(back.map((e) => entryData(e).toString('hex')), entries.map((e) => entryData(e).toString('hex')));
});

test('streamed ZIPs (data descriptors) are read through their central directory', () => {
  const [only] = readZip(streamedZip('trace.trace', 'hello trace'));
  assert.equal(only?.name, 'trace.trace');
  assert.equal(entryData(only).toString(), 'hello trace');
});

test('what is not a ZIP, or is ZIP64, is refused with ZipFormatError', () => {
  assert.throws(() => readZip(Buffer.from('not a zip at all, just some bytes')), ZipFormatError);
  const zip64 = writeZip([entry('a', 'b')]);
  zip64.writeUInt16LE(0xffff, zip64.length - 12);
  assert.throws(() => readZip(zip64), /ZIP64/);
});

test('secret variants: as written, JSON-escaped and URL-encoded', () => {
  assert.deepEqual(secretVariants([SECRET, '']), [SECRET, 'p@ss \\"w0rd\\"/ü', 'p%40ss%20%22w0rd%22%2F%C3%BC']);
});

test('a trace is masked in its text entries only, and left alone when it holds no secret', () => {
  const variants = secretVariants([SECRET]);
  const trace = writeZip([
    entry('trace.trace', `{"method":"fill","params":{"value":${JSON.stringify(SECRET)}}}\n`),
    entry('trace.network', `{"postData":"password=${encodeURIComponent(SECRET)}"}`),
    entry('resources/shot.jpeg', Buffer.concat([Buffer.from([0xff, 0xd8, 0]), Buffer.from(SECRET)]), 0),
  ]);
  const masked = readZip(scrubZip(trace, variants)!);
  const text = (name: string) => entryData(masked.find((e) => e.name === name)!).toString();
  assert.equal(text('trace.trace'), '{"method":"fill","params":{"value":"***"}}\n');
  assert.equal(text('trace.network'), '{"postData":"password=***"}');
  assert.ok(entryData(masked.find((e) => e.name === 'resources/shot.jpeg')!).includes(SECRET), 'binary entries are kept as they are');
  assert.equal(scrubZip(writeZip([entry('trace.trace', '{}')]), variants), undefined);
});

test('scrubFile: masks traces and text files into a new file; images and secret-free files stay', async () => {
  const dir = tempDir('runset-scrub-');
  const tracePath = path.join(dir, 'trace.zip');
  writeFileSync(tracePath, streamedZip('trace.trace', `typed ${SECRET}`));
  const traced = await scrubFile(tracePath, 'application/zip', [SECRET], dir);
  assert.equal(traced.kind, 'scrubbed');
  const [only] = readZip(readFileSync((traced as { file: string }).file));
  assert.equal(entryData(only!).toString(), 'typed ***');

  const md = path.join(dir, 'error-context.md');
  writeFileSync(md, `- textbox "Password": ${SECRET}`);
  const text = await scrubFile(md, 'text/markdown', [SECRET], dir);
  assert.equal(readFileSync((text as { file: string }).file, 'utf8'), '- textbox "Password": ***');

  const png = path.join(dir, 'shot.png');
  writeFileSync(png, Buffer.concat([Buffer.from([0x89, 0x50]), Buffer.from(SECRET)]));
  assert.deepEqual(await scrubFile(png, 'image/png', [SECRET], dir), { kind: 'unchanged' });
  assert.deepEqual(await scrubFile(md, 'text/markdown', [], dir), { kind: 'unchanged' });

  // A file of no known kind (an `artifacts:` glob's `run.out`) is masked when its bytes are text; YAML is text.
  const out = path.join(dir, 'run.out');
  writeFileSync(out, `token=${SECRET}\n`);
  const masked = await scrubFile(out, 'application/octet-stream', [SECRET], dir);
  assert.equal(readFileSync((masked as { file: string }).file, 'utf8'), 'token=***\n');
  const yaml = path.join(dir, 'env.yaml');
  writeFileSync(yaml, `token: ${SECRET}\n`);
  assert.equal((await scrubFile(yaml, 'application/yaml', [SECRET], dir)).kind, 'scrubbed');

  const broken = path.join(dir, 'broken.zip');
  writeFileSync(broken, 'PK not really');
  const dropped = await scrubFile(broken, 'application/zip', [SECRET], dir);
  assert.equal(dropped.kind, 'dropped', 'a trace that cannot be checked is not kept');
});

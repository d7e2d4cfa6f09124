/**
 * Suite version archives for tests, made with node-tar from files given by
 * path: the archive's bytes and its id (their SHA-256), and a fetchArchive
 * that answers them, counting its calls.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar';

export interface TestArchive {
  id: string;
  bytes: Buffer;
}

/** A gzipped tar of `files` (path → content); `links` (path → target) become symbolic links. */
export async function makeArchive(files: Record<string, string>, links: Record<string, string> = {}): Promise<TestArchive> {
  const dir = await mkdtemp(path.join(tmpdir(), 'runset-archive-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), content);
    }
    for (const [name, target] of Object.entries(links)) await symlink(target, path.join(dir, name));
    const file = `${dir}.tgz`;
    await tar.c({ gzip: true, cwd: dir, file, portable: true }, [...Object.keys(files), ...Object.keys(links)].sort());
    const bytes = await readFile(file);
    await rm(file, { force: true });
    return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Serves archives by id (or the bytes `override` names for an id), counting fetches. */
export class ArchiveServer {
  readonly fetched: string[] = [];
  private readonly byId = new Map<string, Buffer>();

  add(archive: TestArchive, bytes: Buffer = archive.bytes): void {
    this.byId.set(archive.id, bytes);
  }

  readonly fetchArchive = async (id: string): Promise<Readable> => {
    this.fetched.push(id);
    await new Promise((resolve) => setTimeout(resolve, 5)); // as a link call: never at once
    const bytes = this.byId.get(id);
    if (!bytes) throw new Error(`no suite version ${id}`);
    return Readable.from([bytes]);
  };
}

/** A package.json and its package-lock.json with no dependencies: `npm ci` installs them offline. */
export function emptyLockedPackage(name = 'suite'): Record<string, string> {
  const pkg = { name, version: '1.0.0', private: true };
  const lock = { name, version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name, version: '1.0.0' } } };
  return { 'package.json': JSON.stringify(pkg, null, 2), 'package-lock.json': JSON.stringify(lock, null, 2) };
}

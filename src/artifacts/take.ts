/**
 * Which files may become artifacts. A test chooses the paths runset stores (a
 * Playwright attachment, a Vitest annotation, a Cucumber attachment, a pytest
 * `[[ATTACHMENT|…]]` line, an `artifacts:` glob), and the worker reads them
 * with its own rights, which are more than the test's under `--run-as`: a
 * test that names the worker's secret key, or links to it, must not get it
 * back as a download. So a file is taken only as the test could have read it
 * itself:
 * - a regular file (no FIFO, device or folder), whose last part is not a
 *   symbolic link;
 * - when tests run as another user, readable by that user by its mode bits,
 *   and every folder above it searchable by that user.
 * It is opened once and read through that handle (on Linux, /proc/self/fd),
 * so it cannot be swapped for another file between the check and the copy.
 */
import { constants } from 'node:fs';
import { open, readlink, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** The user tests run as (`--run-as`), as far as file access goes. */
export interface FileReader {
  uid: number;
  gid: number;
  /** Supplementary groups. */
  groups: readonly number[];
}

export interface TakenFile {
  /** A path that reads the opened file itself. */
  readonly path: string;
  close(): Promise<void>;
}

const THROUGH_FD = process.platform === 'linux';

/** The opened file, or why it is not taken (a phrase: "it is a symbolic link"). */
export async function takeFile(file: string, reader?: FileReader): Promise<TakenFile | string> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO a test left there must not wait for a writer.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'the file was not written';
    if (code === 'ELOOP') return 'it is a symbolic link';
    return `it cannot be read (${code ?? (error as Error).message})`;
  }
  const refuse = async (why: string) => {
    await handle.close();
    return why;
  };
  const info = await handle.stat();
  if (!info.isFile()) return refuse('it is not a regular file');
  const fdPath = `/proc/self/fd/${handle.fd}`;
  if (reader) {
    if (!canRead(info, reader)) return refuse('the user tests run as cannot read it');
    const real = THROUGH_FD ? await readlink(fdPath).catch(() => file) : file;
    for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
      const above = await stat(dir).catch(() => undefined);
      if (!above || !canSearch(above, reader)) return refuse(`the user tests run as cannot reach it (${dir})`);
      if (path.dirname(dir) === dir) break;
    }
  }
  return { path: THROUGH_FD ? fdPath : file, close: () => handle.close() };
}

interface Mode {
  uid: number;
  gid: number;
  mode: number;
}

/** The permission bits that apply to `reader`: owner's, else group's, else others' (shifted to the low three bits). */
function bitsFor(info: Mode, reader: FileReader): number {
  if (info.uid === reader.uid) return (info.mode >> 6) & 7;
  if (info.gid === reader.gid || reader.groups.includes(info.gid)) return (info.mode >> 3) & 7;
  return info.mode & 7;
}

const canRead = (info: Mode, reader: FileReader): boolean => (bitsFor(info, reader) & 4) !== 0;
const canSearch = (info: Mode, reader: FileReader): boolean => (bitsFor(info, reader) & 1) !== 0;

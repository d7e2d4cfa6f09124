/**
 * runset's side of a reporter channel (see ./playwright/reporter.ts for why it
 * is a file): follows the event file a reporter inside a test process appends
 * to (Playwright's, ./frameworks/live-writer.ts for Vitest and Jest), and hands
 * on each complete JSON line, in order, as soon as it is written — woken by the
 * file system (inotify) and, as a safety net where that is not delivered, by a
 * short poll. `close()` reads whatever is left, so no event written before the
 * test process exited is missed.
 */
import { closeSync, openSync, readSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const POLL_MS = 100;
const CHUNK_BYTES = 64 * 1024;

export class EventLog<Event> {
  private readonly fd: number;
  private readonly watcher: FSWatcher | undefined;
  private readonly poll: NodeJS.Timeout;
  private readonly decoder = new StringDecoder('utf8');
  private readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private position = 0;
  private pending = '';
  private closed = false;

  /** Creates (empties) `file` and starts following it. */
  constructor(
    readonly file: string,
    private readonly onEvent: (event: Event) => void,
  ) {
    writeFileSync(file, '');
    this.fd = openSync(file, 'r');
    try {
      this.watcher = watch(file, () => this.drain());
      this.watcher.on('error', () => undefined); // the poll still runs
    } catch {
      this.watcher = undefined; // no inotify here: the poll alone
    }
    this.poll = setInterval(() => this.drain(), POLL_MS);
    this.poll.unref();
  }

  /** Reads to the end of the file, then stops following it. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.drain();
    this.closed = true;
    clearInterval(this.poll);
    this.watcher?.close();
    closeSync(this.fd);
  }

  private drain(): void {
    if (this.closed) return;
    for (;;) {
      const read = readSync(this.fd, this.buffer, 0, this.buffer.length, this.position);
      if (read === 0) return;
      this.position += read;
      this.pending += this.decoder.write(this.buffer.subarray(0, read));
      let newline: number;
      while ((newline = this.pending.indexOf('\n')) >= 0) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        if (line.trim() !== '') this.emit(line);
      }
    }
  }

  private emit(line: string): void {
    let event: Event;
    try {
      event = JSON.parse(line) as Event;
    } catch {
      return; // not a line of ours: ignore it rather than fail the batch
    }
    this.onEvent(event);
  }
}

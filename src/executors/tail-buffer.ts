/**
 * Keeps the last `limit` bytes written to it, in a fixed ring: memory stays
 * bounded however much a test prints, and the end of the output — where the
 * failure usually is — is what survives.
 */

export const OUTPUT_LIMIT_BYTES = 64 * 1024;

export class TailBuffer {
  readonly limit: number;
  private ring: Buffer | undefined; // allocated at the first write: most runs print little or nothing
  private position = 0;
  private full = false;
  /** Every byte ever written, kept or not. */
  total = 0;

  constructor(limit: number = OUTPUT_LIMIT_BYTES) {
    if (!Number.isInteger(limit) || limit <= 0) throw new RangeError(`TailBuffer limit must be a positive integer, got ${limit}`);
    this.limit = limit;
  }

  get dropped(): number {
    return this.total - this.length;
  }

  get length(): number {
    return this.full ? this.limit : this.position;
  }

  write(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0) return;
    this.total += bytes.length;
    const ring = (this.ring ??= Buffer.allocUnsafe(this.limit));
    if (bytes.length >= this.limit) {
      bytes.copy(ring, 0, bytes.length - this.limit);
      this.position = 0;
      this.full = true;
      return;
    }
    const first = Math.min(bytes.length, this.limit - this.position);
    bytes.copy(ring, this.position, 0, first);
    if (first < bytes.length) {
      bytes.copy(ring, 0, first);
      this.position = bytes.length - first;
      this.full = true;
    } else {
      this.position += first;
      if (this.position === this.limit) {
        this.position = 0;
        this.full = true;
      }
    }
  }

  /** The kept bytes, oldest first. */
  toBuffer(): Buffer {
    if (!this.ring) return Buffer.alloc(0);
    if (!this.full) return Buffer.from(this.ring.subarray(0, this.position));
    return Buffer.concat([this.ring.subarray(this.position), this.ring.subarray(0, this.position)]);
  }

  /**
   * The kept bytes as UTF-8. When bytes were dropped, the cut may fall inside a
   * multi-byte character: its leftover continuation bytes are skipped rather
   * than shown as a replacement character.
   */
  toString(): string {
    let bytes = this.toBuffer();
    if (this.dropped > 0) {
      let start = 0;
      while (start < 3 && start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    return bytes.toString('utf8');
  }
}

/** The last `limit` bytes of `text` (UTF-8), cut on a character boundary. */
export function tailOf(text: string, limit: number = OUTPUT_LIMIT_BYTES): string {
  if (text.length * 3 <= limit) return text; // cannot exceed the limit even if every char took 3 bytes
  const buffer = new TailBuffer(limit);
  buffer.write(text);
  return buffer.toString();
}

/**
 * The files a framework suite leaves for a case, as artifacts of its member:
 * - **attachments** its framework reports for the case (a Cucumber
 *   `this.attach`, a Vitest annotation's attachment, a pytest
 *   `[[ATTACHMENT|path]]` line): a path, or the bytes themselves, which are
 *   written into the share's work folder;
 * - files matching the entry's **`artifacts:`** globs, written while the share
 *   ran (../artifact-files.ts), each given to the case its path names (`attribute`).
 * Whether a file may be read at all is decided once, where every artifact is
 * stored (src/artifacts/take.ts); here files are only found and named.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ArtifactFile } from '../../core/types.js';
import { extensionOf, type ArtifactNames } from '../artifact-files.js';

/** A file a case attached to its result, as its framework reports it. */
export interface ReportedAttachment {
  /** What the suite called it (a file name, or a label). */
  name: string;
  contentType: string;
  /** Where the file is: absolute, or relative to the entry's folder. */
  path?: string;
  /** Or its bytes, base64-encoded. */
  body?: string;
}

/**
 * One case's reported attachments as artifact files: paths resolved against
 * the entry's folder, bodies written into `folder` (the share's work folder,
 * member `index`'s own sub-folder).
 */
export function attachmentFiles(attachments: readonly ReportedAttachment[], dir: string, folder: string, names: ArtifactNames): ArtifactFile[] {
  return attachments.map((a, n) => {
    if (a.path !== undefined) {
      const file = path.resolve(dir, a.path);
      return { name: names.next(a.name === '' ? path.basename(file) : a.name, path.extname(file)), contentType: a.contentType, path: file };
    }
    const ext = path.extname(a.name) || extensionOf(a.contentType);
    const name = names.next(a.name, ext);
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, `${n}-${name}`);
    writeFileSync(file, Buffer.from(a.body ?? '', 'base64'));
    return { name, contentType: a.contentType, path: file };
  });
}

/** Lower case, every run of other characters one `-`: how a title and a file name are compared. */
const folded = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/**
 * Which member each file belongs to: the one whose name its path holds (its
 * full name, or its own title, compared folded and as whole words:
 * `Checkout › pays by card` matches `screenshots/checkout-pays-by-card.png`,
 * `card` does not match `discard.png`), the longest match winning.
 * A file that names no member of the share goes to each member that failed, or
 * to the first member when none did: never dropped.
 */
export function attribute(files: readonly string[], dir: string, members: ReadonlyArray<{ titles: readonly string[]; failed: boolean }>): Map<number, string[]> {
  const names = members.map((m) => [folded(m.titles.join(' ')), folded(m.titles[m.titles.length - 1] ?? '')].filter((n) => n !== ''));
  const failed = members.flatMap((m, index) => (m.failed ? [index] : []));
  const byMember = new Map<number, string[]>();
  const give = (index: number, file: string) => byMember.set(index, [...(byMember.get(index) ?? []), file]);
  for (const file of files) {
    const where = `-${folded(path.relative(dir, file))}-`;
    let best: { index: number; length: number } | undefined;
    names.forEach((candidates, index) => {
      for (const name of candidates) if (where.includes(`-${name}-`) && name.length > (best?.length ?? 0)) best = { index, length: name.length };
    });
    if (best) give(best.index, file);
    else for (const index of failed.length > 0 ? failed : members.length > 0 ? [0] : []) give(index, file);
  }
  return byMember;
}

/**
 * The artifacts of one share's members (files found and named by
 * ../artifact-files.ts, attachments made files and written files given out by
 * ./attachments.ts): each case's reported attachments as its result is made, live or from
 * the report; then, when the process has ended, the files the entry's
 * `artifacts:` globs match that the share wrote. What cannot be written or
 * found is said in the member's output.
 */
import path from 'node:path';
import type { CaseResult, FrameworkTestSpec } from '../../core/types.js';
import type { ReportedCase } from './adapter.js';
import { ArtifactNames, filesWritten, keepFiles } from '../artifact-files.js';
import { attachmentFiles, attribute } from './attachments.js';
import { resultOf } from './live.js';

export class ShareArtifacts {
  /** When the share started: a file older than this was not written by it. */
  private readonly since = Date.now();
  private readonly names = new Map<number, ArtifactNames>();
  private readonly patterns: readonly string[];
  private readonly dir: string;

  constructor(
    private readonly specs: readonly FrameworkTestSpec[],
    private readonly workDir: string,
  ) {
    this.patterns = specs[0]?.artifacts ?? [];
    this.dir = specs[0]?.dir ?? '';
  }

  /** Whether the entry keeps files by `artifacts:` globs. */
  get globbed(): boolean {
    return this.patterns.length > 0;
  }

  /** Member `index`'s result from its case, its attachments among its artifacts. */
  result(index: number, c: ReportedCase): CaseResult {
    const result = resultOf(c);
    if (!c.attachments?.length) return result;
    try {
      result.artifacts = attachmentFiles(c.attachments, this.dir, path.join(this.workDir, 'attachments', String(index)), this.namesOf(index));
    } catch (error) {
      result.output += `${result.output === '' || result.output.endsWith('\n') ? '' : '\n'}runset: attachments not kept: ${(error as Error).message}\n`;
    }
    return result;
  }

  /** Adds to the ended members' results the files the globs match that the share wrote. */
  async addWritten(ended: ReadonlyMap<number, CaseResult>): Promise<void> {
    if (!this.globbed || ended.size === 0) return;
    const indexes = [...ended.keys()];
    let files: string[];
    try {
      files = await filesWritten(this.patterns, this.dir, this.since);
    } catch (error) {
      for (const result of ended.values()) result.output += `\nrunset: artifacts: ${(error as Error).message}\n`;
      return;
    }
    const members = indexes.map((index) => ({ titles: this.specs[index]?.case?.titles ?? [], failed: !(ended.get(index) as CaseResult).passed }));
    for (const [at, owned] of attribute(files, this.dir, members)) {
      const index = indexes[at] as number;
      const result = ended.get(index) as CaseResult;
      const { artifacts, note } = keepFiles(owned, this.dir, this.namesOf(index), result.artifacts.length);
      result.artifacts.push(...artifacts);
      if (note) result.output += `\n${note}\n`;
    }
  }

  private namesOf(index: number): ArtifactNames {
    let names = this.names.get(index);
    if (!names) this.names.set(index, (names = new ArtifactNames()));
    return names;
  }
}

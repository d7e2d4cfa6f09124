/**
 * A command's JUnit XML (`junit: PATH` on a `command` entry): after the
 * command ends, every file matching PATH (a file or glob, relative to the
 * command's `cwd`) written since it started is read, and each `<testcase>`
 * becomes a case of the member's result. The member's pass or fail stays the
 * command's exit code; what cannot be read is said in its output, never
 * guessed.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type * as Xmlbuilder2 from 'xmlbuilder2';
import { lazyPackage } from '../../core/lazy-package.js';
import type { ResultCase } from '../../core/types.js';

/** The XML parser, loaded when the first report is read. */
const xmlbuilder2 = lazyPackage<typeof Xmlbuilder2>('xmlbuilder2');

/** Bounds no real report reaches, so one member's result stays small. */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024;
export const MAX_CASES = 5000;
const MAX_ERROR = 1000;

export interface JunitRead {
  cases: ResultCase[];
  /** What could not be read, one line each, for the member's output. */
  notes: string[];
}

/** The cases of the reports matching `pattern` under `cwd`, modified at or after `since` (ms since the epoch). */
export async function readJunitReports(pattern: string, cwd: string, since: number): Promise<JunitRead> {
  const { glob } = await import('tinyglobby'); // with the first report looked for (see ../artifact-files.ts)
  const files = (await glob(pattern, { cwd, absolute: true, onlyFiles: true, dot: true })).sort();
  const fresh: string[] = [];
  for (const file of files) {
    const info = await stat(file).catch(() => undefined);
    // A second of slack: some file systems keep whole seconds.
    if (info && info.mtimeMs >= since - 1000) fresh.push(file);
  }
  if (fresh.length === 0) return { cases: [], notes: [`runset: junit: no file matching ${JSON.stringify(pattern)} in ${cwd} was written by this run`] };
  const read: JunitRead = { cases: [], notes: [] };
  for (const file of fresh) {
    const info = await stat(file);
    if (info.size > MAX_REPORT_BYTES) {
      read.notes.push(`runset: junit: ${path.relative(cwd, file)} is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB: not read`);
      continue;
    }
    try {
      read.cases.push(...parseJunit(await readFile(file, 'utf8')));
    } catch (error) {
      read.notes.push(`runset: junit: ${path.relative(cwd, file)} is not JUnit XML runset can read: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  if (read.cases.length > MAX_CASES) {
    read.notes.push(`runset: junit: ${read.cases.length} cases; the first ${MAX_CASES} are kept`);
    read.cases = read.cases.slice(0, MAX_CASES);
  }
  return read;
}

/** The part of the DOM xmlbuilder2's parser builds that is read here. */
interface XmlElement {
  nodeName: string;
  textContent: string | null;
  children: ArrayLike<XmlElement>;
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): ArrayLike<XmlElement>;
}

/** One `<testcase>` as written, for readers that name cases their own way (pytest's, src/executors/frameworks/pytest.ts). */
export interface JunitTestcase {
  name: string;
  classname: string | null;
  status: ResultCase['status'];
  durationMs: number;
  /** The first lines of its failure or error; null when none. */
  error: string | null;
  /** Its failure or error in full (message and text). */
  failureText: string;
  /** Its `<properties><property name value>`. */
  properties: Map<string, string>;
}

/** Every `<testcase>` of a JUnit XML text, in document order. */
export function parseJunit(xml: string): ResultCase[] {
  return readJunitTestcases(xml).map((c) => ({ name: c.classname ? `${c.classname} › ${c.name}` : c.name, status: c.status, durationMs: c.durationMs, error: c.error }));
}

/** Every `<testcase>` of a JUnit XML text with its properties, in document order; throws when it is not JUnit XML. */
export function readJunitTestcases(xml: string): JunitTestcase[] {
  const doc = xmlbuilder2().create(xml);
  const root = doc.root().node as unknown as XmlElement;
  if (root.nodeName !== 'testsuites' && root.nodeName !== 'testsuite') throw new Error(`its root element is <${root.nodeName}>, not <testsuites> or <testsuite>`);
  return Array.from(root.getElementsByTagName('testcase')).map((testcase): JunitTestcase => {
    const children = Array.from(testcase.children);
    const failure = children.find((c) => c.nodeName === 'failure' || c.nodeName === 'error');
    const skipped = children.some((c) => c.nodeName === 'skipped');
    const seconds = Number(testcase.getAttribute('time') ?? '0');
    const properties = new Map<string, string>();
    for (const holder of children.filter((c) => c.nodeName === 'properties')) {
      for (const p of Array.from(holder.children)) {
        const name = p.nodeName === 'property' ? p.getAttribute('name') : null;
        if (name !== null) properties.set(name, p.getAttribute('value') ?? p.textContent ?? '');
      }
    }
    const message = failure?.getAttribute('message') ?? '';
    return {
      name: testcase.getAttribute('name') ?? '(unnamed)',
      classname: testcase.getAttribute('classname') || null,
      status: failure ? 'failed' : skipped ? 'skipped' : 'passed',
      durationMs: Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0,
      error: failure ? firstLines(message || failure.textContent || failure.nodeName) : null,
      failureText: failure ? [message, failure.textContent ?? ''].filter((t) => t.trim() !== '').join('\n\n') : '',
      properties,
    };
  });
}

function firstLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  return lines.slice(0, 3).join('\n').slice(0, MAX_ERROR);
}

/**
 * pytest: not an npm package but a Python interpreter with the pytest module
 * (`python:`, default python3), found and versioned by asking that
 * interpreter. Listed by collecting only; a share runs in one pytest process
 * given its cases' node ids, its outcomes read from pytest's JUnit XML with
 * the reader of `command` entries' `junit:` (../command/junit.ts). Both go
 * through ./pytest-driver.ts, whose plugin names each case by its node id and
 * counts its executions. runset's `retries` become pytest-rerunfailures'
 * `--reruns`. Cases are named by node id: `file::Class::test[param]`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '../../core/typebox.js';
import type { FrameworkTestSpec } from '../../core/types.js';
import { readJunitTestcases } from '../command/junit.js';
import { errorSummary } from '../playwright/error-text.js';
import type { FrameworkAdapter, FrameworkReport, ReportedCase } from './adapter.js';
import { contentTypeOf } from '../artifact-files.js';
import type { ReportedAttachment } from './attachments.js';
import type { FrameworkInstall } from './locate.js';
import { PYTEST_DRIVER, PYTEST_PROBE } from './pytest-driver.js';

const PROBE_TIMEOUT_MS = 30_000;

/** `file::Class::test[param]` as runset's case: the file, then the rest split on `::` (never inside the parameters). */
export function splitNodeId(id: string): { file: string; titles: string[] } {
  const bracket = id.indexOf('[');
  const head = bracket === -1 ? id : id.slice(0, bracket);
  const parts = head.split('::');
  const file = parts.shift() as string;
  if (bracket !== -1) parts[parts.length - 1] = `${parts[parts.length - 1] ?? ''}${id.slice(bracket)}`;
  return { file, titles: parts.length === 0 || (parts.length === 1 && parts[0] === '') ? [] : parts };
}

export function nodeIdOf(c: { file: string; titles: readonly string[] }): string {
  return [c.file, ...c.titles].join('::');
}

/** pytest's own error lines (`E   …`) when it printed any, else the first lines of `text`. */
export function pytestSummary(text: string): string {
  const lines = text.split('\n').filter((line) => /^E\s/.test(line)).map((line) => line.slice(1).trim());
  return lines.length > 0 ? lines.slice(0, 6).join('\n') : errorSummary(text, false);
}

function interpreterOf(spec: FrameworkTestSpec): string {
  const given = spec.python ?? 'python3';
  // A path is the suite's own (a virtualenv's bin/python); a bare name is looked up on PATH.
  return given.includes('/') ? path.resolve(spec.dir, given) : given;
}

/** Probes a worker has made, by interpreter and folder: a worker runs share after share of one suite, and asking Python costs a few hundred ms. */
const probed = new Map<string, { install: FrameworkInstall; at: number }>();
/** How long a probe is believed: long enough for a set's shares, short enough that an interpreter changed under a running worker is seen soon. */
const PROBE_REUSE_MS = 60_000;

async function locatePytest(spec: FrameworkTestSpec): Promise<FrameworkInstall> {
  const python = interpreterOf(spec);
  const key = JSON.stringify([python, spec.dir]);
  const known = probed.get(key);
  if (known && Date.now() - known.at < PROBE_REUSE_MS) return known.install;
  const fix = `install pytest for it (Debian: apt-get install python3-pytest) or set "python:" on the entry to an interpreter that has it, such as /usr/bin/python3`;
  let out: string;
  try {
    ({ stdout: out } = await promisify(execFile)(python, ['-c', PYTEST_PROBE], { cwd: spec.dir, encoding: 'utf8', timeout: PROBE_TIMEOUT_MS }));
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error(`pytest: the Python interpreter ${JSON.stringify(python)} was not found: ${fix}`);
    const tried = e.stdout?.split('\n')[0]?.trim();
    const said = (e.stderr ?? '').split('\n').filter((l) => l.trim() !== '').at(-1) ?? e.message;
    throw new Error(`pytest is not usable with ${JSON.stringify(python)}${tried ? ` (${tried})` : ''}: ${said.trim()}: ${fix}`);
  }
  const [executable, version] = out.trim().split('\n').map((l) => l.trim());
  const install = { cli: '-m pytest', program: executable || python, version: version ?? 'unknown' };
  probed.set(key, { install, at: Date.now() });
  return install;
}

function common(spec: FrameworkTestSpec): string[] {
  const args = ['-p', 'no:cacheprovider', ...spec.args];
  if (spec.retriesOverride && spec.retries > 0) args.push(`--reruns=${spec.retries}`);
  return args;
}

export const pytestAdapter = Object.freeze<FrameworkAdapter>({
  type: 'pytest',
  title: 'pytest',
  packageName: 'pytest',
  retriesFlag: true,
  properties: {
    python: Type.Optional(Type.String({ minLength: 1, description: 'a Python interpreter with pytest: a name on PATH such as python3 (the default), or a path such as .venv/bin/python, relative to dir' })),
  },
  locate: locatePytest,
  caseName: nodeIdOf,
  listArgs: (spec, report) => ['-c', PYTEST_DRIVER, 'list', report, ...common(spec), '--collect-only', '-q'],
  runArgs(spec, cases, plan) {
    writeFileSync(`${plan.report}.cases.json`, JSON.stringify(cases.map(nodeIdOf)));
    const files = [...new Set(cases.map((c) => c.file))];
    return ['-c', PYTEST_DRIVER, 'run', plan.report, ...common(spec), '-o', 'junit_family=xunit1', '--continue-on-collection-errors', `--junitxml=${plan.report}`, ...files];
  },
  readListing: readPytestListing,
  read: readPytestJunit,
});

/** The files a case printed as `[[ATTACHMENT|path]]` (the driver's `runset.attachments`), each once. */
function attachmentsOf(property: string | undefined): { attachments?: ReportedAttachment[] } {
  if (property === undefined) return {};
  let paths: unknown;
  try {
    paths = JSON.parse(property);
  } catch {
    return {};
  }
  if (!Array.isArray(paths)) return {};
  const files = [...new Set(paths.filter((p): p is string => typeof p === 'string' && p !== ''))];
  return files.length > 0 ? { attachments: files.map((file) => ({ name: path.basename(file), contentType: contentTypeOf(file), path: file })) } : {};
}

function readPytestListing(text: string): FrameworkReport {
  let raw: { cases?: unknown; errors?: unknown };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch (error) {
    throw new Error(`the listing is not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(raw.cases) || !Array.isArray(raw.errors)) throw new Error('the listing has no "cases" and "errors" lists');
  const fileErrors = new Map<string, string>();
  for (const [id, message] of raw.errors as Array<[string, string]>) fileErrors.set(splitNodeId(String(id)).file, pytestSummary(String(message)));
  const cases = (raw.cases as unknown[]).map((id): ReportedCase => ({ ...splitNodeId(String(id)), status: 'skipped', durationMs: 0, attempts: 0, error: null, output: '' }));
  return { cases, fileErrors };
}

/**
 * A run's JUnit XML: each case by its `runset.id` property. A `<testcase>`
 * without one is a file pytest could not collect (classname empty, the module
 * as its dotted name): its error is kept for the cases of that file.
 */
function readPytestJunit(text: string): FrameworkReport {
  const cases: ReportedCase[] = [];
  const fileErrors = new Map<string, string>();
  for (const c of readJunitTestcases(text)) {
    const id = c.properties.get('runset.id');
    if (id === undefined) {
      if (c.status === 'failed') fileErrors.set(`${c.name.replace(/\./g, '/')}.py`, pytestSummary(c.failureText));
      continue;
    }
    const attempts = Number(c.properties.get('runset.attempts') ?? '1');
    cases.push({
      ...splitNodeId(id),
      status: c.status,
      durationMs: c.durationMs,
      attempts: c.status === 'skipped' ? 0 : Number.isInteger(attempts) && attempts > 0 ? attempts : 1,
      error: c.status === 'failed' ? pytestSummary(c.failureText) || c.error : null,
      output: c.failureText,
      ...attachmentsOf(c.properties.get('runset.attachments')),
    });
  }
  return { cases, fileErrors };
}

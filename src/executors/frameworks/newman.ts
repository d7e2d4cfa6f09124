/**
 * Newman (Postman collections): each request of the collection is a case,
 * named `collection › folder › request` (the collection's `info.name` stands
 * where other frameworks have a file, as Newman's report names it too). Listed from the collection file
 * itself (Newman has no listing: a run sends the requests), the suite's
 * installed newman checked first; a share is one `newman run` selecting its
 * requests by name (`--folder`, once per name, which Newman also matches
 * against requests), its outcomes read from Newman's `json` reporter
 * (./newman-report.ts). The set's variables become the Postman environment
 * of the run (a file in the share's work folder, never the command line,
 * which other users of the host can read). Newman has no retries.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from '../../core/typebox.js';
import type { FrameworkTestSpec } from '../../core/types.js';
import type { FrameworkAdapter, ReportedCase } from './adapter.js';
import { readNewmanJson } from './newman-report.js';

interface CollectionItem {
  name?: unknown;
  item?: unknown;
}

function collectionOf(spec: FrameworkTestSpec): string {
  if (spec.collection === undefined) throw new Error('the entry names no "collection"');
  return spec.collection;
}

/** Every request of the collection file as a case (listing: none has run). */
async function listCollection(spec: FrameworkTestSpec): Promise<ReportedCase[]> {
  const file = collectionOf(spec);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path.resolve(spec.dir, file), 'utf8'));
  } catch (error) {
    throw new Error(`${file}: not a Postman collection runset can read (${(error as Error).message})`);
  }
  const root = raw as CollectionItem & { info?: { name?: unknown } };
  if (typeof root !== 'object' || root === null || !Array.isArray(root.item)) {
    throw new Error(`${file}: not a Postman collection (v2.0 or v2.1): it has no "item" list`);
  }
  const name = root.info?.name;
  if (typeof name !== 'string' || name === '') throw new Error(`${file}: the collection has no "info.name"`);
  const cases: ReportedCase[] = [];
  const walk = (items: unknown[], folders: string[], at: string): void => {
    items.forEach((value, index) => {
      const item = value as CollectionItem;
      const where = `${at}[${index}]`;
      if (typeof item !== 'object' || item === null || typeof item.name !== 'string') throw new Error(`${file}: ${where} has no "name"`);
      if (Array.isArray(item.item)) walk(item.item, [...folders, item.name], `${where}.item`);
      else cases.push({ file: name, titles: [...folders, item.name], status: 'skipped', durationMs: 0, attempts: 0, error: null, output: '' });
    });
  };
  walk(root.item, [], 'item');
  return cases;
}

/** Every item name in the collection file (folders' and requests'), none when it cannot be read. */
function itemNames(file: string): Set<string> {
  const names = new Set<string>();
  const walk = (items: unknown): void => {
    if (!Array.isArray(items)) return;
    for (const item of items as CollectionItem[]) {
      if (typeof item?.name === 'string') names.add(item.name);
      walk(item?.item);
    }
  };
  try {
    walk((JSON.parse(readFileSync(file, 'utf8')) as CollectionItem).item);
  } catch {
    // Unreadable now: Newman will say why in its own words.
  }
  return names;
}

/** The set's variables as a Postman environment file beside the report. */
function environmentFile(report: string, variables: Readonly<Record<string, string>>): string {
  const file = path.join(path.dirname(report), 'runset-environment.json');
  const values = Object.entries(variables).map(([key, value]) => ({ key, value, type: 'default', enabled: true }));
  writeFileSync(file, JSON.stringify({ name: 'runset', values }), { mode: 0o600 });
  return file;
}

export const newmanAdapter = Object.freeze<FrameworkAdapter>({
  type: 'newman',
  title: 'Newman',
  packageName: 'newman',
  retriesFlag: false,
  retriesHint: 'no "retries": Newman has none (each request runs once per iteration)',
  properties: {
    collection: Type.String({ minLength: 1, description: 'the Postman collection file (v2.0 or v2.1 JSON), relative to dir, such as shop.postman_collection.json' }),
  },
  list: listCollection,
  listArgs: () => {
    throw new Error('Newman is listed from its collection file');
  },
  runArgs(spec, cases, plan) {
    const args = ['run', collectionOf(spec), ...spec.args, '--reporters', 'cli,json', '--reporter-json-export', plan.report, '--color', 'off'];
    if (spec.timeoutOverride) args.push('--timeout-request', String(Math.round(spec.timeoutSeconds * 1000)));
    if (plan.variables && Object.keys(plan.variables).length > 0) args.push('--environment', environmentFile(plan.report, plan.variables));
    const wanted = [...new Set(cases.map((c) => c.titles[c.titles.length - 1] ?? ''))];
    // Newman runs nothing when one name is not in the collection: a request removed since the listing must fail alone.
    const known = itemNames(path.resolve(spec.dir, collectionOf(spec)));
    const present = wanted.filter((name) => known.has(name));
    for (const name of present.length > 0 ? present : wanted) args.push('--folder', name);
    return args;
  },
  read: (text, dir) => readNewmanJson(text, dir),
});

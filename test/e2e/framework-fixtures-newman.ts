/**
 * The Newman suite of the version matrix: a Postman collection calling a
 * small local HTTP server (started by the test; its URL reaches the
 * collection as the set's variable BASE_URL, which runset makes the Postman
 * environment). A request that passes its test, one whose test fails, one
 * whose only test is skipped (`pm.test.skip`), one whose request cannot be
 * sent, and one at the top level. Newman has no retries. `runDirectly` runs
 * it as a person would, with Newman's own JSON report, read here as the
 * reference.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DirectCase } from './framework-fixtures.js';

export const COLLECTION_FILE = 'shop.postman_collection.json';

const test = (lines: string[]) => [{ listen: 'test', script: { type: 'text/javascript', exec: lines } }];
const get = (url: string) => ({ method: 'GET', url });

function collection(name: string): unknown {
  return {
    info: { name, schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    item: [
      {
        name: 'group',
        item: [
          { name: 'passes', request: get('{{BASE_URL}}/ok'), event: test(["pm.test('status is 200', () => pm.response.to.have.status(200));"]) },
          { name: 'fails', request: get('{{BASE_URL}}/broken'), event: test(["pm.test('status is 200', () => pm.response.to.have.status(200));"]) },
          // The skip is the subject under test: runset must report a request whose only test is skipped as skipped.
          { name: 'skipped on purpose', request: get('{{BASE_URL}}/ok'), event: test(["pm.test.skip('not checked yet', () => {});"]) },
          { name: 'cannot connect', request: get('http://127.0.0.1:1/nothing-listens-here') },
        ],
      },
      { name: 'top level', request: get('{{BASE_URL}}/ok') },
    ],
  };
}

/** The server the collection calls: 200 on every path but /broken (500). */
export async function startApi(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/broken' ? 500 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Writes the collection (named after `tag`, so names differ across suites) and links `modules`. */
export function writeNewmanSuite(dir: string, tag: string, modules: string): void {
  mkdirSync(dir, { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, COLLECTION_FILE), JSON.stringify(collection(tag), null, 2));
}

export function newmanNames(tag: string): { passes: string; fails: string } {
  return { passes: `${tag} › group › passes`, fails: `${tag} › group › fails` };
}

interface Item {
  id: string;
  name: string;
  item?: Item[];
}

/** `newman run` in `dir` with BASE_URL and its JSON report; its requests by `collection › folder › request`. */
export async function runNewmanDirectly(dir: string, modules: string, baseUrl: string): Promise<Map<string, DirectCase>> {
  const report = path.join(dir, 'direct-report.json');
  const cli = path.join(modules, 'newman', 'bin', 'newman.js');
  const args = [cli, 'run', COLLECTION_FILE, '--env-var', `BASE_URL=${baseUrl}`, '--reporters', 'json', '--reporter-json-export', report];
  await new Promise<void>((resolve) => execFile(process.execPath, args, { cwd: dir }, () => resolve()));
  const json = JSON.parse(readFileSync(report, 'utf8')) as {
    collection: { info: { name: string }; item: Item[] };
    run: {
      executions: Array<{ item: { id: string }; assertions?: Array<{ skipped: boolean; error?: { message: string } }>; requestError?: { message?: string; code?: string } }>;
    };
  };
  const names = new Map<string, string>();
  const walk = (items: Item[], prefix: string[]) => items.forEach((i) => (i.item ? walk(i.item, [...prefix, i.name]) : names.set(i.id, [...prefix, i.name].join(' › '))));
  walk(json.collection.item, [json.collection.info.name]);
  const out = new Map<string, DirectCase>();
  for (const e of json.run.executions) {
    const name = names.get(e.item.id) as string;
    // A request error is written as the error's own fields (code, syscall), without its message.
    const failed = e.assertions?.find((a) => a.error)?.error?.message ?? (e.requestError ? (e.requestError.message ?? e.requestError.code ?? 'request error') : undefined);
    const skipped = (e.assertions ?? []).length > 0 && (e.assertions ?? []).every((a) => a.skipped);
    out.set(name, { name, status: failed !== undefined ? 'failed' : skipped ? 'skipped' : 'passed', firstLine: failed ?? null });
  }
  return out;
}

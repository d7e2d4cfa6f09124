/**
 * Scraping a runset process's /metrics over HTTP, and reading the Prometheus
 * text format it answers. The one text-format parser on npm
 * (parse-prometheus-text-format) folds every series of a labelled histogram
 * into one and drops its labels, `_count` and `_sum`, which are what these
 * tests read: so the sample lines are read here, following the format's
 * grammar (`name{label="value",…} value`, values escaped with \\ \" \n).
 */
import assert from 'node:assert/strict';
import { parser as promql } from '@prometheus-io/lezer-promql';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** Metric families by name, from their `# TYPE` lines. */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
const UNESCAPE: Record<string, string> = { '\\\\': '\\', '\\"': '"', '\\n': '\n' };

export function parseExposition(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line of the text format: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    let read = 0;
    LABEL.lastIndex = 0;
    for (let l = LABEL.exec(body); l; l = LABEL.exec(body)) {
      labels[l[1]!] = l[2]!.replace(/\\[\\"n]/g, (e) => UNESCAPE[e]!);
      read = LABEL.lastIndex;
    }
    assert.equal(read, body.length, `malformed labels: ${line}`);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  assert.equal(res.status, 200, `GET ${url}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

/** The sum of the samples named `name` whose labels include `labels` (undefined: no such sample). */
export function valueOf(s: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return matching.length === 0 ? undefined : matching.reduce((sum, x) => sum + x.value, 0);
}

/** Scrapes until `ready` holds (a scrape's set events arrive with the next webhook tick), or fails after `withinMs`. */
export async function scrapeUntil(url: string, ready: (s: Scrape) => boolean, withinMs = 15_000): Promise<Scrape> {
  const until = Date.now() + withinMs;
  for (;;) {
    const s = await scrape(url);
    if (ready(s)) return s;
    if (Date.now() > until) assert.fail(`${url} did not show what was awaited within ${withinMs}ms:\n${s.samples.filter((x) => x.name.startsWith('runset_')).map((x) => `${x.name}${JSON.stringify(x.labels)} ${x.value}`).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The metrics address a runset process printed on start (`…, metrics at http://…/metrics`). */
export function metricsUrlIn(output: string): string {
  const m = /metrics at (http:\/\/\S+\/metrics)/.exec(output);
  assert.ok(m, `no metrics address in:\n${output}`);
  return m[1]!;
}

/** The metric names and matched label names of a PromQL expression's selectors, after checking that it parses. */
export function selectorsIn(expr: string): { metrics: string[]; labels: string[] } {
  const metrics: string[] = [];
  const labels: string[] = [];
  const errors: string[] = [];
  promql.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(node.from, node.from + 20)}"`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') metrics.push(expr.slice(node.from, node.to));
      if (node.name === 'LabelName' && node.node.parent?.name === 'UnquotedLabelMatcher') labels.push(expr.slice(node.from, node.to));
    },
  });
  assert.deepEqual(errors, [], `PromQL syntax errors in ${expr}`);
  return { metrics, labels };
}

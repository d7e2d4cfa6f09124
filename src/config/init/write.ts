/**
 * The runset.config.yaml that `runset init` writes: one environment declaring
 * the variables found, one entry per suite found, each with a comment saying
 * what found it and what it needs on a worker. Built with the `yaml`
 * Document API (comments are nodes' own), then loaded with runset's own
 * loader before anything is written: init never writes a file `serve` refuses.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node, YAMLMap, YAMLSeq } from 'yaml';
import { Document, isScalar } from '../yaml.js';
import { FRAMEWORK_ADAPTERS } from '../../executors/frameworks/registry.js';
import { parseSuiteConfig, type SuiteConfig } from '../suite.js';
import { findSuites, type FoundSuite } from './suites.js';
import { findVariables, looksSecret, relativeTo, type FoundVariable, type FoundVariables } from './variables.js';

/** What init found under a folder and the config text it makes of it. */
export interface InitPlan {
  suites: FoundSuite[];
  variables: FoundVariables;
  /** Entry names, in the order of `suites`. */
  names: string[];
  text: string;
  /** The text as runset's loader reads it (checked, not listed). */
  config: SuiteConfig;
}

/** A value that says it must be replaced; plain text, so the file loads as written. */
export const PLACEHOLDER_VALUE = 'change-me';

/**
 * Finds the suites under `root` and the variables they read, and makes the
 * config text for `file` (its paths relative to the file's folder), with one
 * environment, `env`. A text the loader refuses throws its ConfigError.
 */
export function planConfig(root: string, file: string, env: string): InitPlan {
  const suites = findSuites(root);
  const variables = findVariables(suites);
  const base = path.dirname(file);
  const names = entryNames(suites, root);
  const text = configText({ suites, variables, names, base, env });
  return { suites, variables, names, text, config: parseSuiteConfig(text, file) };
}

/** `playwright` for a suite at the repository's root, `playwright e2e` for one in e2e/; a collection by its own name; unique. */
function entryNames(suites: readonly FoundSuite[], root: string): string[] {
  const used = new Set<string>();
  return suites.map((suite) => {
    // A collection by its file (newman postman/shop), any other suite by its folder (playwright e2e).
    const where = relativeTo(root, suite.collection ? path.join(suite.dir, suite.collection.replace(/\.postman_collection\.json$/, '')) : suite.dir);
    const wanted = where === '.' ? suite.type : `${suite.type} ${where}`;
    let name = wanted;
    for (let n = 2; used.has(name); n++) name = `${wanted} ${n}`;
    used.add(name);
    return name;
  });
}

interface TextInput {
  suites: readonly FoundSuite[];
  variables: FoundVariables;
  names: readonly string[];
  base: string;
  env: string;
}

const HEADER = [
  ' Written by `runset init` from the test suites found under this folder.',
  ' Next: `runset check` loads it as `runset serve` will and lists the tests each',
  ' environment runs; `runset serve` runs them on demand; `runset trigger --env NAME`',
  ' (with RUNSET_URL and RUNSET_API_KEY) runs a set from CI and waits for its result.',
  ' Every key is described in docs/reference/config.md of the runset package.',
].join('\n');

/** The JSON Schema runset ships: dist/src/config/init/write.js is four levels below the package root. */
const SHIPPED_SCHEMA = fileURLToPath(new URL('../../../../schema/runset.config.schema.json', import.meta.url));

/**
 * The editors' line naming runset's JSON Schema, when runset is installed inside
 * the config's folder (./node_modules/runset/…, a path every checkout has); none
 * otherwise, as a path out of the folder would be this machine's alone.
 */
function schemaLine(base: string): string | undefined {
  const relative = relativeTo(base, SHIPPED_SCHEMA);
  if (relative.startsWith('..') || path.isAbsolute(relative) || !existsSync(SHIPPED_SCHEMA)) return undefined;
  return ` yaml-language-server: $schema=./${relative}`;
}

function configText({ suites, variables, names, base, env }: TextInput): string {
  const values = Object.fromEntries(variables.declared.map((v) => [v.name, valueOf(v)]));
  const tests = suites.map((suite, index) => entryOf(suite, names[index] as string, base));
  const doc = new Document({ environments: { [env]: { variables: values } }, tests });
  const schema = schemaLine(base);
  doc.commentBefore = schema === undefined ? HEADER : `${schema}\n${HEADER}`;
  const environment = doc.getIn(['environments', env], true) as Node;
  environment.commentBefore = environmentComment(variables);
  const declared = doc.getIn(['environments', env, 'variables'], true) as YAMLMap;
  for (const pair of declared.items) {
    const variable = variables.declared.find((v) => isScalar(pair.key) && v.name === pair.key.value) as FoundVariable;
    if (isScalar(pair.value)) pair.value.comment = ` ${variableComment(variable, base)}`;
  }
  (doc.get('tests', true) as YAMLSeq).items.forEach((item, index) => {
    (item as Node).commentBefore = entryComment(suites[index] as FoundSuite, base);
  });
  return doc.toString({ lineWidth: 0 });
}

function entryOf(suite: FoundSuite, name: string, base: string): Record<string, string> {
  const entry: Record<string, string> = { name, type: suite.type, dir: relativeTo(base, suite.dir) };
  if (suite.collection !== undefined) entry.collection = suite.collection;
  return entry;
}

function valueOf(variable: FoundVariable): string {
  if (looksSecret(variable.name)) return `\${env:${variable.name}}`;
  return variable.fallback ?? PLACEHOLDER_VALUE;
}

function environmentComment(variables: FoundVariables): string {
  const lines = [
    ' One environment to start with: copy it for each place you test (staging, preview),',
    ' each with its own values. Every variable reaches every test as an environment variable.',
  ];
  if (variables.declared.length === 0) lines.push(' No variable was found in the suites: declare the ones your tests read under "variables".');
  if (variables.leftOut.length > 0) lines.push(` Also read, left to the workers' environment (not declared): ${variables.leftOut.join(', ')}.`);
  return lines.join('\n');
}

function variableComment(variable: FoundVariable, base: string): string {
  const files = variable.readBy.slice(0, 2).map((file) => relativeTo(base, file));
  const readBy = `read by ${files.join(', ')}${variable.readBy.length > 2 ? ` and ${variable.readBy.length - 2} more` : ''}`;
  if (looksSecret(variable.name)) return `${readBy}; a secret: set ${variable.name} where runset serve runs (masked everywhere)`;
  if (variable.fallbackFrom !== undefined) return variable.readBy.length === 1 ? `${readBy}, with this default` : `${readBy} (the default in ${relativeTo(base, variable.fallbackFrom)})`;
  return `${readBy}; set the real value`;
}

function entryComment(suite: FoundSuite, base: string): string {
  const lines = [` Found by ${suite.files.map((file) => relativeTo(base, file)).join(', ')}.`];
  const pw = suite.playwright;
  if (pw !== undefined) {
    if (pw.projects.length > 0) {
      // A setup project runs anyway for the projects depending on it: the example names one of the others.
      const example = pw.projects.find((p) => !/setup|teardown/i.test(p)) ?? pw.projects[0];
      lines.push(` Projects: ${pw.projects.join(', ')}; every one runs ("project: ${example}" keeps one).`);
      if (pw.projects.some((p) => /firefox|webkit|safari/i.test(p))) lines.push(' Firefox and WebKit projects need their browsers installed on the workers (npx playwright install).');
    }
    if (pw.webServer !== undefined) {
      lines.push(` Its webServer${pw.webServer ? ` (${pw.webServer})` : ''} is started by Playwright on the worker, once per batch:`, ' the worker needs what it needs (the app\'s dependencies installed).');
    }
    lines.push(' Listed and run with the suite\'s own @playwright/test (runset\'s when it has none).');
  } else if (suite.type === 'pytest') {
    lines.push(' Run with python3 on PATH; a virtualenv: add "python: .venv/bin/python".');
  } else if (suite.type !== 'playwright') {
    lines.push(` Listed and run with the suite's own ${FRAMEWORK_ADAPTERS[suite.type].title}, installed in "dir" or a folder above it.`);
  }
  return lines.join('\n');
}

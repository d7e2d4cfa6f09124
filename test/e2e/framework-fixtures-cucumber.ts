/**
 * The version matrix's Cucumber suite (./framework-fixtures.ts has the
 * others'): the same five cases as scenarios (four under a Rule "group", one
 * directly under the Feature), plus an outline of two example rows and a
 * scenario whose step is undefined, which must fail. Its profile
 * (cucumber.json) names the feature path, as real suites do, and retries only
 * the `@flaky` scenario. Run directly with Cucumber's own JUnit report as the
 * reference: it names cases the way Cucumber does (Rule - Scenario -
 * Examples - #row: name), read with runset's JUnit reader.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseJunit } from '../../src/executors/command/junit.js';
import type { DirectCase } from './framework-fixtures.js';

const FEATURE = `@shop
Feature: Shop

  Scenario: top level
    Given a step that passes

  Rule: group

    Scenario: passes
      Given a step that prints

    Scenario: fails
      Given a step that fails

    Scenario: skipped on purpose
      Given a step that skips

    @flaky
    Scenario: passes on retry
      Given a step that fails the first time

    Scenario Outline: eats <count>
      Given a step that passes with <count>

      Examples: small
        | count |
        | 1     |
        | 2     |

    Scenario: undefined step
      Given a step nobody defined
`;

const STEPS = `const { Given } = require('@cucumber/cucumber');
const assert = require('node:assert');
let tries = 0;
Given('a step that passes', function () {});
Given('a step that prints', function () {
  console.log('hello from passes');
});
Given('a step that fails', function () {
  assert.equal(1 + 1, 3, 'arithmetic still works');
});
// The skip is the subject under test: runset must report a scenario that never runs as skipped.
Given('a step that skips', function () {
  return 'skipped';
});
Given('a step that fails the first time', function () {
  tries += 1;
  assert.equal(tries, 2, 'the first attempt fails');
});
Given('a step that passes with {int}', function (count) {
  assert.ok(count > 0);
});
`;

/** Writes the suite (feature, steps, profile), its feature named after `tag`; the feature's path. */
export function writeCucumberSuite(dir: string, tag: string): string {
  const file = `features/${tag}.feature`;
  mkdirSync(path.join(dir, 'features', 'support'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: tag, private: true }));
  writeFileSync(path.join(dir, 'cucumber.json'), JSON.stringify({ default: { paths: [file], retry: 1, retryTagFilter: '@flaky' } }));
  writeFileSync(path.join(dir, file), FEATURE);
  writeFileSync(path.join(dir, 'features', 'support', 'steps.js'), STEPS);
  return file;
}

/** Runs the suite with Cucumber's JUnit report; its cases by `file › Feature › Rule › Scenario …`. */
export async function runCucumberDirectly(dir: string, cli: string): Promise<Map<string, DirectCase>> {
  const report = path.join(dir, 'direct-report.xml');
  await new Promise<void>((resolve) => execFile(process.execPath, [cli, '--format', `junit:${report}`], { cwd: dir }, () => resolve()));
  const file = (JSON.parse(readFileSync(path.join(dir, 'cucumber.json'), 'utf8')) as { default: { paths: string[] } }).default.paths[0] as string;
  const out = new Map<string, DirectCase>();
  for (const c of parseJunit(readFileSync(report, 'utf8'))) {
    // classname › name, the name's parts joined by " - " as Cucumber's naming does.
    const [feature, rest] = c.name.split(' › ') as [string, string];
    const name = [file, feature, ...rest.split(' - ')].join(' › ');
    const status = c.status === 'failed' ? 'failed' : c.status === 'skipped' ? 'skipped' : 'passed';
    out.set(name, { name, status, firstLine: status === 'failed' && c.error !== 'failure' ? c.error : null });
  }
  return out;
}

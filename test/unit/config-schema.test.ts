/**
 * The published JSON Schema of runset.config.yaml (schema/runset.config.schema.json)
 * and the loader agree: the committed file is what the generator writes, every
 * file the loader accepts (the examples, the README's, test/fixtures/configs/)
 * the schema accepts, and a file the loader refuses for a rule JSON Schema can
 * state, the schema refuses at the same path. The rules it cannot state are
 * shown refused by the loader and accepted by the schema, one case each.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv, type ErrorObject } from 'ajv';
import { globSync } from 'tinyglobby';
import { parseDocument } from 'yaml';
import { CONFIG_SCHEMA_DRAFT, LOADER_ONLY_RULES } from '../../src/config/config-json-schema.js';
import { CONFIG_SCHEMA_FILE, renderConfigJsonSchema } from '../../src/config/build-json-schema.js';
import { ConfigError, loadSuiteConfig, parseSuiteConfig } from '../../src/config/suite.js';
import { formatPath, type PathSegment } from '../../src/config/suite-error.js';
import { LOADER_ONLY, RULES_SEEN_BEFORE_THE_SCHEMA, SCHEMA_REFUSES } from './config-schema-cases.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'configs');
/** Where the table's files are read as if they lay: their tests may name the fixtures' folders. */
const TABLE_FILE = path.join(FIXTURES, 'runset.config.yaml');
const MODELINE = /^# yaml-language-server: \$schema=(\S+)\n/;

const committed = readFileSync(CONFIG_SCHEMA_FILE, 'utf8');
const schema = JSON.parse(committed) as Record<string, unknown>;
// Strict: a keyword Ajv does not know (a TypeBox or runset annotation that leaked) throws here, and so does a type mismatch between keywords.
const validate = new Ajv({ allErrors: true, strictTypes: true, strictTuples: true }).compile(schema);

/** The file's value as the loader reads it (YAML merge keys on), failing on a YAML error. */
function valueOf(text: string, where: string): unknown {
  const doc = parseDocument(text, { merge: true });
  assert.deepEqual(doc.errors, [], `${where} is not valid YAML`);
  return doc.toJS({ maxAliasCount: 100 });
}

/** The loader's error for `text`, read as `file`, or undefined when it accepts it. */
function loaderError(text: string, file: string): ConfigError | undefined {
  try {
    parseSuiteConfig(text, file);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

/**
 * The paths Ajv's errors name, written as the loader writes them: an unknown,
 * missing or refused key is named by the key itself (Ajv names its mapping),
 * and a list's index is a number (a mapping's key stays a string).
 */
function schemaErrorPaths(errors: readonly ErrorObject[], value: unknown): string[] {
  return errors.map((error) => {
    const keys = error.instancePath === '' ? [] : error.instancePath.split('/').slice(1).map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const params = error.params as { additionalProperty?: string; missingProperty?: string; propertyName?: string };
    const named = params.additionalProperty ?? params.missingProperty ?? params.propertyName;
    if (named !== undefined) keys.push(named);
    const segments: PathSegment[] = [];
    let node: unknown = value;
    for (const key of keys) {
      segments.push(Array.isArray(node) ? Number(key) : key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
    return formatPath(segments);
  });
}

/** Every file the loader accepts that the test suite can name: the examples, the fixtures, the README's configuration. */
function acceptedFiles(): string[] {
  const examples = globSync('examples/**/runset.config.yaml', { cwd: ROOT, ignore: ['**/node_modules/**'], absolute: true });
  const fixtures = globSync('*.yaml', { cwd: FIXTURES, absolute: true });
  return [...examples, ...fixtures].sort();
}

describe('schema/runset.config.schema.json', () => {
  test('is exactly what `npm run build:schema` writes from the loader\'s schemas', () => {
    assert.ok(committed === renderConfigJsonSchema(), 'schema/runset.config.schema.json differs from the loader\'s schemas: run `npm run build:schema` and commit the result');
  });

  test('is a draft-07 schema with an $id, a title and a description, shipped in the package', () => {
    assert.equal(schema.$schema, CONFIG_SCHEMA_DRAFT);
    for (const key of ['$id', 'title', 'description']) assert.equal(typeof schema[key], 'string', key);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files?: string[]; scripts: Record<string, string> };
    assert.ok(pkg.files?.includes('schema/runset.config.schema.json'), 'package.json "files" lists schema/runset.config.schema.json');
    assert.match(pkg.scripts['build:schema'] ?? '', /build-json-schema\.js/);
  });

  test('lists every loader-only rule in its $comment', () => {
    for (const rule of LOADER_ONLY_RULES) assert.ok(String(schema.$comment).includes(rule), rule);
  });
});

describe('files runset accepts, the schema accepts', () => {
  const files = acceptedFiles();

  test('the examples and at least a dozen fixtures are found', () => {
    assert.ok(files.some((file) => file.endsWith(path.join('examples', 'demo', 'runset.config.yaml'))), 'the demo config');
    assert.ok(files.filter((file) => file.startsWith(FIXTURES)).length >= 12, `fixtures in ${FIXTURES}`);
  });

  for (const file of files) {
    const name = path.relative(ROOT, file);
    test(name, () => {
      loadSuiteConfig(file); // throws a ConfigError when runset refuses it
      const text = readFileSync(file, 'utf8');
      const value = valueOf(text, name);
      assert.ok(validate(value), `${name}: ${JSON.stringify(validate.errors)}`);
      // The editor's modeline is the first line and names the committed schema.
      const modeline = MODELINE.exec(text);
      assert.ok(modeline, `${name} starts with "# yaml-language-server: $schema=…"`);
      assert.equal(path.resolve(path.dirname(file), modeline[1] as string), CONFIG_SCHEMA_FILE, `${name}'s modeline names the schema`);
    });
  }

  test("the README's configuration example", () => {
    const readme = readFileSync(path.join(ROOT, 'docs', 'guides', 'configuration.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Configuration: `runset.config.yaml`'));
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(example, 'the section opens with a YAML example');
    assert.equal(loaderError(example, path.join(ROOT, 'runset.config.yaml')), undefined);
    assert.ok(validate(valueOf(example, 'README')), JSON.stringify(validate.errors));
  });
});

describe('files runset refuses, the schema refuses at the same path', () => {
  for (const { name, yaml, path: where } of SCHEMA_REFUSES) {
    test(name, () => {
      const error = loaderError(yaml, TABLE_FILE);
      assert.ok(error, 'runset refuses it');
      assert.equal(error.path, where, error.message);
      const value = valueOf(yaml, name);
      assert.equal(validate(value), false, 'the schema refuses it');
      const paths = schemaErrorPaths(validate.errors ?? [], value);
      assert.ok(paths.includes(where), `the schema names ${where}; it named ${paths.join(', ')}`);
    });
  }
});

describe('loader-only rules: runset refuses, the schema cannot', () => {
  for (const { rule, name, yaml, path: where } of LOADER_ONLY) {
    test(`${name} (rule ${rule}: ${LOADER_ONLY_RULES[rule - 1] ?? 'none'})`, () => {
      assert.ok(LOADER_ONLY_RULES[rule - 1], `LOADER_ONLY_RULES has a rule ${rule}`);
      const error = loaderError(yaml, TABLE_FILE);
      assert.ok(error, 'runset refuses it');
      assert.equal(error.path, where, error.message);
      // Accepted: when the schema learns to state the rule, move the case to SCHEMA_REFUSES and the rule out of LOADER_ONLY_RULES.
      assert.ok(validate(valueOf(yaml, name)), `the schema now refuses it: ${JSON.stringify(validate.errors)}`);
    });
  }

  test('every loader-only rule is shown by a case', () => {
    const shown = new Set([...LOADER_ONLY.map((item) => item.rule), ...RULES_SEEN_BEFORE_THE_SCHEMA]);
    LOADER_ONLY_RULES.forEach((rule, index) => assert.ok(shown.has(index + 1), `no case shows rule ${index + 1}: ${rule}`));
  });
});

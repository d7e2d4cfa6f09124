/**
 * Turns "this value does not match this TypeBox schema" into one precise,
 * human failure: the first problem in document order, with its path, what came
 * and what is accepted (the schema's `description`).
 *
 * Why not the validator's own error list: for a config file people need the
 * one error that explains the others (an unknown key `urll` before the
 * "missing url" it causes), the keys that are accepted, and "put it in quotes"
 * for a YAML number where a string is expected — generic JSON Schema messages
 * give none of that. The compiled TypeBox validator stays the judge of
 * validity; this walker only runs once a value has failed it, and handles just
 * the keywords the suite schemas use.
 */
import type { TSchema } from 'typebox';
import { Value } from '../core/typebox.js';
import { describeValue, type DocPath, type Failure } from './suite-error.js';

/** The JSON Schema keywords the suite schemas use (TypeBox emits plain JSON Schema). */
interface SchemaNode {
  type?: string;
  description?: string;
  /** runset annotation on records: what their keys must look like. */
  keyDescription?: string;
  const?: unknown;
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  patternProperties?: Record<string, SchemaNode>;
  minProperties?: number;
  items?: SchemaNode;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

export function explain(schema: TSchema, value: unknown, path: DocPath = []): Failure | undefined {
  return walk(schema, value, path);
}

function walk(node: SchemaNode, value: unknown, path: DocPath): Failure | undefined {
  if (node.anyOf) return walkUnion(node, value, path);
  if (node.const !== undefined && value !== node.const) {
    return { path, problem: `got ${describeValue(value)}`, expected: expectedOf(node) };
  }
  if (node.type !== undefined && !hasType(node.type, value)) return typeFailure(node, value, path);
  if (typeof value === 'string') return walkString(node, value, path);
  if (typeof value === 'number') return walkNumber(node, value, path);
  if (Array.isArray(value)) return walkArray(node, value, path);
  if (isMapping(value)) return walkObject(node, value, path);
  return undefined;
}

function walkUnion(node: SchemaNode, value: unknown, path: DocPath): Failure | undefined {
  const branches = node.anyOf ?? [];
  if (branches.some((branch) => Value.Check(branch as TSchema, value))) return undefined;
  if (branches.every((branch) => branch.const !== undefined)) {
    const allowed = branches.map((branch) => JSON.stringify(branch.const)).join(', ');
    return { path, problem: `got ${describeValue(value)}`, expected: node.description ?? `one of ${allowed}` };
  }
  // Explain against the branch of the value's own kind (a list against the list branch…).
  const sameKind = branches.find((branch) => branch.type !== undefined && hasType(branch.type, value));
  if (sameKind) return walk({ ...sameKind, description: sameKind.description ?? node.description }, value, path);
  return typeFailure(node, value, path);
}

function walkString(node: SchemaNode, value: string, path: DocPath): Failure | undefined {
  const expected = expectedOf(node);
  if (node.minLength !== undefined && value.length < node.minLength) {
    return { path, problem: value === '' ? 'empty' : `too short (${value.length} characters)`, expected };
  }
  if (node.maxLength !== undefined && value.length > node.maxLength) {
    return { path, problem: `too long (${value.length} characters, at most ${node.maxLength})`, expected };
  }
  if (node.pattern !== undefined && !new RegExp(node.pattern, 'u').test(value)) {
    return { path, problem: `got ${describeValue(value)}`, expected };
  }
  return undefined;
}

function walkNumber(node: SchemaNode, value: number, path: DocPath): Failure | undefined {
  const tooSmall =
    (node.minimum !== undefined && value < node.minimum) ||
    (node.exclusiveMinimum !== undefined && value <= node.exclusiveMinimum);
  const tooLarge = node.maximum !== undefined && value > node.maximum;
  if (tooSmall || tooLarge) return { path, problem: `got ${value}, out of range`, expected: expectedOf(node) };
  return undefined;
}

function walkArray(node: SchemaNode, value: unknown[], path: DocPath): Failure | undefined {
  if (node.minItems !== undefined && value.length < node.minItems) {
    return { path, problem: value.length === 0 ? 'empty list' : `only ${value.length} items`, expected: expectedOf(node) };
  }
  if (node.maxItems !== undefined && value.length > node.maxItems) {
    return { path, problem: `too many items (${value.length}, at most ${node.maxItems})`, expected: expectedOf(node) };
  }
  if (!node.items) return undefined;
  for (const [index, item] of value.entries()) {
    const failure = walk(node.items, item, [...path, index]);
    if (failure) return failure;
  }
  return undefined;
}

function walkObject(node: SchemaNode, value: Record<string, unknown>, path: DocPath): Failure | undefined {
  // Present keys first, in the order written: an unknown `urll` explains a missing `url`.
  for (const [key, item] of Object.entries(value)) {
    const child = childSchema(node, key);
    if (child === 'unknown') return unknownKey(node, key, [...path, key]);
    if (child) {
      const failure = walk(child, item, [...path, key]);
      if (failure) return failure;
    }
  }
  for (const key of node.required ?? []) {
    if (!Object.hasOwn(value, key)) {
      return { path: [...path, key], problem: 'missing', expected: expectedOf(node.properties?.[key] ?? {}) };
    }
  }
  if (node.minProperties !== undefined && Object.keys(value).length < node.minProperties) {
    return { path, problem: 'empty', expected: expectedOf(node) };
  }
  return undefined;
}

/** The schema for `key`, `undefined` when anything goes, or 'unknown' when the key is not accepted. */
function childSchema(node: SchemaNode, key: string): SchemaNode | undefined | 'unknown' {
  const declared = node.properties?.[key];
  if (declared && Object.hasOwn(node.properties ?? {}, key)) return declared;
  for (const [pattern, schema] of Object.entries(node.patternProperties ?? {})) {
    if (new RegExp(pattern, 'u').test(key)) return schema;
  }
  if (node.additionalProperties === false) return 'unknown';
  return typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
}

function unknownKey(node: SchemaNode, key: string, path: DocPath): Failure {
  if (node.patternProperties && !node.properties) {
    return { path, problem: `invalid name ${JSON.stringify(key)}`, expected: node.keyDescription ?? 'a valid name' };
  }
  const accepted = Object.keys(node.properties ?? {});
  const guess = closest(key, accepted);
  return {
    path,
    problem: `unknown key ${JSON.stringify(key)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}`,
    expected:
      accepted.length > 0
        ? `one of the keys ${accepted.join(', ')}${node.keyDescription ? ` (${node.keyDescription})` : ''}`
        : 'no keys here',
  };
}

function typeFailure(node: SchemaNode, value: unknown, path: DocPath): Failure {
  let expected = expectedOf(node);
  const wantsString = node.type === 'string' || (node.anyOf ?? []).some((branch) => branch.type === 'string');
  if (wantsString && (typeof value === 'number' || typeof value === 'boolean')) {
    // YAML reads `8080` and `true` as a number and a boolean; the fix is quoting.
    expected += ` (put it in quotes: "${String(value)}")`;
  }
  return { path, problem: `got ${describeValue(value)}`, expected };
}

function expectedOf(node: SchemaNode): string {
  if (node.description) return node.description;
  if (node.anyOf) return node.anyOf.map(expectedOf).join(' or ');
  switch (node.type) {
    case 'string':
      return 'a string';
    case 'integer':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'nothing';
    case 'array':
      return 'a list';
    case 'object':
      return 'a mapping';
    default:
      return 'a valid value';
  }
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isMapping(value);
    default:
      return true;
  }
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The accepted key nearest to a typo, if it is near enough to be a likely intent. */
function closest(key: string, accepted: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of accepted) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

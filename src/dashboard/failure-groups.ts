/**
 * A set's failures grouped by cause, as data: the set page shows "3 tests:
 * TimeoutError: locator.fill: Timeout <duration> exceeded." with the tests
 * under it, so one broken dependency reads as one problem, not thirty. Pure
 * (no DOM; its one import is the UUID spelling, itself pure): the server's unit
 * tests check it and the page bundles it.
 *
 * The signature of an error is its first line with what varies between
 * occurrences of the same cause replaced, in this order:
 *  1. quoted values — "…", '…', `…` — become "…": they hold the data a test saw
 *     (a body, a value, a text), which differs per test while the cause is one;
 *  2. ids — UUIDs, and hex runs of 8 or more holding a digit (hashes, commits) — become <id>;
 *  3. durations — a number with ms, s, sec, seconds, min, minutes or h — become <duration>;
 *  4. any other number (ports, counts, exit codes, line:column; 127.0.0.1 or 1.2.3 as one) becomes <n>;
 *  5. runs of white space become one space, and the line is cut at 200 characters.
 * So `exited with code 1` and `exited with code 2` are one group: both say the
 * command failed, and the members' own errors (listed under it) keep the code.
 */
import { UUID_SOURCE } from '../core/uuid.js';

export interface FailedMember {
  id: string;
  name: string;
  status: string;
  error: string | null;
}

export interface FailureGroup<M extends FailedMember = FailedMember> {
  signature: string;
  /** The first member's own first line, as an example of the real text. */
  example: string;
  members: M[];
}

const MAX_SIGNATURE = 200;
/** What a failure without a message groups under. */
export const NO_MESSAGE = '(no error message)';

/** A single quote after a letter is an apostrophe (can't), not the start of a value. */
const QUOTED = /"(?:[^"\\]|\\.)*"|(?<![A-Za-z])'(?:[^'\\]|\\.)*'|`[^`]*`/g;
const UUID = new RegExp(`\\b${UUID_SOURCE}\\b`, 'g');
const HEX_ID = /\b(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b/gi;
const DURATION = /\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?|min|minutes?|h)\b/gi;
const NUMBER = /\d+(?:\.\d+)*/g;

/** The first line of an error, as shown beside a group, white space kept single (Playwright's colour codes are gone already: see its reporter). */
export function firstLine(error: string | null): string {
  const line = (error ?? '').split('\n', 1)[0]!.replace(/\s+/g, ' ').trim();
  return line === '' ? NO_MESSAGE : line;
}

export function errorSignature(error: string | null): string {
  const line = firstLine(error);
  if (line === NO_MESSAGE) return line;
  const signature = line
    .replace(QUOTED, (q) => `${q[0]}…${q[0]}`)
    .replace(UUID, '<id>')
    .replace(HEX_ID, '<id>')
    .replace(DURATION, '<duration>')
    .replace(NUMBER, '<n>');
  return signature.length > MAX_SIGNATURE ? `${signature.slice(0, MAX_SIGNATURE - 1)}…` : signature;
}

/**
 * The failed members (status FAIL) grouped by signature: the largest group
 * first, ties in the order their first member appears; members keep their order.
 */
export function groupFailures<M extends FailedMember>(members: readonly M[]): FailureGroup<M>[] {
  const groups = new Map<string, FailureGroup<M>>();
  for (const member of members) {
    if (member.status !== 'FAIL') continue;
    const signature = errorSignature(member.error);
    const group = groups.get(signature);
    if (group) group.members.push(member);
    else groups.set(signature, { signature, example: firstLine(member.error), members: [member] });
  }
  // Array.prototype.sort is stable: equal sizes keep first-appearance order.
  return [...groups.values()].sort((a, b) => b.members.length - a.members.length);
}

/**
 * Lease tickets: what proves, over HTTP, that a worker holds a lease.
 *
 * A lease (runId, workerId, claim) is visible to anyone who can read the
 * member's set, and guessable by a worker that once held it; so the worker
 * protocol never takes one alone. Each claimed member is answered with a ticket
 * the API signs from the stored row it claimed — the member's set, environment
 * and test name, and the key that claimed it — and every write under the lease
 * must send it back. The route takes those facts from the ticket, never from
 * the request body: a worker key cannot finish, heartbeat, start or release a
 * member it did not claim itself, nor write its outcome into another set's or
 * environment's history.
 *
 * Stateless (an HMAC under the service's secret key), so every API process of
 * one store checks every ticket alike, and a claim costs no extra write.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ClaimedRun } from '../core/types.js';
import type { LeaseRef } from '../store/store.js';

/** The stored row's facts a ticket carries: what a finish needs beside the lease. */
export interface LeaseFacts {
  setId: string;
  env: string;
  name: string;
}

const MAC_LENGTH = 43; // base64url of a SHA-256

function macOf(secret: Buffer, keyId: string, lease: LeaseRef, facts: string): string {
  return createHmac('sha256', secret)
    .update(JSON.stringify(['runset lease ticket', keyId, lease.runId, lease.workerId, lease.claim, facts]))
    .digest('base64url');
}

/** The ticket of a member claimed by key `keyId`: `<facts>.<mac>`. */
export function leaseTicket(secret: Buffer, keyId: string, run: ClaimedRun): string {
  const facts = Buffer.from(JSON.stringify([run.setId, run.env, run.spec.name])).toString('base64url');
  return `${facts}.${macOf(secret, keyId, { runId: run.id, workerId: run.workerId, claim: run.claim }, facts)}`;
}

/**
 * The facts of a lease's ticket, when the ticket was signed here for this very
 * lease and key; undefined for anything else (no ticket, another lease's,
 * another key's, forged, altered).
 */
export function openLeaseTicket(secret: Buffer, keyId: string, lease: LeaseRef & { token?: string }): LeaseFacts | undefined {
  const token = lease.token ?? '';
  const dot = token.length - MAC_LENGTH - 1;
  if (dot <= 0 || token[dot] !== '.') return undefined;
  const facts = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(macOf(secret, keyId, lease, facts));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const [setId, env, name] = JSON.parse(Buffer.from(facts, 'base64url').toString('utf8')) as [string, string, string];
  return { setId, env, name };
}

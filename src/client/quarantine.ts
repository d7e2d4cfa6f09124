/**
 * Quarantine entries as the client reads them (the server's shape in
 * src/core/wire-quarantine.ts; type-only import, nothing of the server runs
 * here). Tolerant like ./parse.ts: what the CLI relies on is checked.
 */
import type { QuarantineAdded, QuarantineEntryView } from '../core/wire-quarantine.js';
import { isRecord } from './parse.js';

export type QuarantineEntry = QuarantineEntryView;
export type QuarantineResult = QuarantineAdded & { created: boolean };

export function readQuarantineEntry(body: unknown): QuarantineEntry | null {
  if (!isRecord(body) || typeof body.env !== 'string' || typeof body.name !== 'string' || typeof body.until !== 'string') return null;
  const by = isRecord(body.createdBy) && typeof body.createdBy.keyId === 'string' ? { keyId: body.createdBy.keyId, keyName: typeof body.createdBy.keyName === 'string' ? body.createdBy.keyName : '' } : null;
  return {
    env: body.env,
    name: body.name,
    reason: typeof body.reason === 'string' ? body.reason : '',
    until: body.until,
    createdAt: typeof body.createdAt === 'string' ? body.createdAt : '',
    createdBy: by,
  };
}

export function readQuarantineList(body: unknown): QuarantineEntry[] | null {
  if (!isRecord(body) || !Array.isArray(body.quarantine)) return null;
  const entries: QuarantineEntry[] = [];
  for (const item of body.quarantine) {
    const entry = readQuarantineEntry(item);
    if (entry === null) return null;
    entries.push(entry);
  }
  return entries;
}

export function readQuarantineAdded(body: unknown): QuarantineAdded | null {
  if (!isRecord(body)) return null;
  const entry = readQuarantineEntry(body.entry);
  return entry && { entry, knownTest: body.knownTest !== false };
}

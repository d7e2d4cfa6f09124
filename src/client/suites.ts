/**
 * Suite versions as the client reads them (the server's shape in
 * src/core/wire-suites.ts; type-only import, nothing of the server runs here).
 * Tolerant like ./parse.ts: what the CLI relies on is checked, the rest kept.
 */
import type { SuiteVersionView } from '../core/wire-suites.js';
import { isRecord } from './parse.js';

export type SuiteVersion = SuiteVersionView;

export interface SuiteUpload {
  /** False: the server already had this version (the same content is the same version). */
  created: boolean;
  version: SuiteVersion;
}


export function readSuiteVersion(body: unknown): SuiteVersion | null {
  if (!isRecord(body) || typeof body.id !== 'string' || typeof body.size !== 'number') return null;
  return {
    id: body.id,
    size: body.size,
    files: typeof body.files === 'number' ? body.files : 0,
    createdAt: typeof body.createdAt === 'string' ? body.createdAt : '',
    commit: typeof body.commit === 'string' ? body.commit : null,
    names: Array.isArray(body.names) ? body.names.filter((n): n is string => typeof n === 'string') : [],
    sets: typeof body.sets === 'number' ? body.sets : 0,
    lastSetAt: typeof body.lastSetAt === 'string' ? body.lastSetAt : null,
  };
}

export function readSuiteVersionList(body: unknown): SuiteVersion[] | null {
  if (!isRecord(body) || !Array.isArray(body.versions)) return null;
  const versions: SuiteVersion[] = [];
  for (const item of body.versions) {
    const version = readSuiteVersion(item);
    if (version === null) return null;
    versions.push(version);
  }
  return versions;
}

/** What a set's details say of the suite version it runs. */
export interface SetSuite {
  id: string;
  names: string[];
  commit: string | null;
}

export function readSetSuite(details: unknown): SetSuite | null {
  const suite = isRecord(details) ? details.suite : undefined;
  if (!isRecord(suite) || typeof suite.id !== 'string') return null;
  return {
    id: suite.id,
    names: Array.isArray(suite.names) ? suite.names.filter((n): n is string => typeof n === 'string') : [],
    commit: typeof suite.commit === 'string' ? suite.commit : null,
  };
}

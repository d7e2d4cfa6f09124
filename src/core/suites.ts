/**
 * Suite versions (issue 27): a suite that travels with its set. A version is a
 * gzipped tar of a suite's folder (the folder of its runset.config.yaml and the
 * files its tests need), named by the SHA-256 of those bytes, so the same content
 * is the same version and uploads nothing twice.
 *
 * A version brings tests only. Environments, variables, secrets, webhooks and
 * outbound rules come from the server's config; an environment runs uploaded
 * versions only with `allowSuiteUploads: true`.
 *
 * The API never runs a version's code (it holds the database and the secret
 * key): what Playwright lists of it comes with the upload, listed where its
 * dependencies are installed (the CLI, in CI), in LISTING_FILE. Workers fetch a
 * version by id, check its hash, unpack it and install its dependencies
 * (src/suites/).
 */
import type { FrameworkCase } from './test-specs.js';

/** A version's id: the SHA-256 (lowercase hex) of its archive's bytes. */
export const SUITE_ID = /^[0-9a-f]{64}$/;
/** A published name (`main`, `pr-123`, `release/2.4`) that points at one version at a time. */
export const SUITE_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;

/** Largest archive accepted by default (`serve --max-suite-size`). */
export const DEFAULT_MAX_SUITE_BYTES = 50 * 1024 * 1024;
/** Most bytes an archive's files may hold in all, unpacked: a small archive must not unpack into a full disk. */
export const MAX_SUITE_UNPACKED_BYTES = 1024 ** 3;
/** Most files (and folders) an archive may hold. */
export const MAX_SUITE_FILES = 20_000;
/**
 * The limits an archive is read under, past the size in bytes sent and
 * MAX_SUITE_FILES (issue 39: untrusted input is bounded before it is buffered):
 * the API's inspection and a worker's unpacking both stop at the first one
 * passed (src/suites/tar-feed.ts), and docs/guides/uploads.md lists them.
 */
export const SUITE_READ_LIMITS = {
  /** Longest path of an entry, in UTF-8 bytes: Linux's PATH_MAX is 4096, and a version is unpacked some folders deep. */
  pathBytes: 1024,
  /** Most bytes of all entries' paths together: 20,000 entries of ~100 bytes. */
  nameBytes: 2 * 1024 * 1024,
  /** Largest tar extended header (pax, GNU long name): it holds one path and a few fields. */
  metaBytes: 64 * 1024,
  /** Most tar bytes (files, headers, padding) one byte of archive may inflate to, once past ratioFloorBytes. */
  ratio: 200,
  /** Inflated bytes any archive may reach before the ratio applies: a tiny archive of a few files is padded to 10 KiB by tar. */
  ratioFloorBytes: 1024 * 1024,
  /** Most tar bytes an archive may inflate to: its files' MAX_SUITE_UNPACKED_BYTES, and room for headers and padding. */
  tarBytes: MAX_SUITE_UNPACKED_BYTES + 64 * 1024 * 1024,
} as const;

/** The config file at the archive's root. */
export const SUITE_CONFIG_FILE = 'runset.config.yaml';
/**
 * What the uploader's frameworks listed: one `playwright test --list
 * --reporter=json` report per Playwright entry of the config, and the cases a
 * framework entry's own listing found (Vitest, Jest, …), each by its index in
 * `tests`: the API turns these into members exactly as it turns its own
 * listing into members (src/config/suite-listing.ts).
 */
export const LISTING_FILE = '.runset/listing.json';

export interface SuiteListing {
  version: 1;
  /** One item per listed entry of the config: `entry` is its index in the config's `tests`. */
  reports: Array<{ entry: number; report: unknown } | { entry: number; cases: ListedFrameworkCase[] }>;
}

/** A framework entry's case as its listing named it (its entry is the listing item's): what members are named and selected by. */
export type ListedFrameworkCase = Omit<FrameworkCase, 'entry'>;

/**
 * Where a version's files are, in the specs planned from it: every path of a
 * member planned from a version starts here, and a worker maps it to its own
 * unpacked copy of that version (src/suites/cache.ts).
 */
export const VERSION_ROOT = '/runset-suite';

/** A stored version, as the API shows it. */
export interface SuiteVersionInfo {
  id: string;
  /** Archive size, bytes. */
  size: number;
  /** Files in the archive. */
  files: number;
  createdAt: string;
  /** The commit the uploader named (`--commit`, or CI's), when known. */
  commit: string | null;
  /** Names that point at it now. */
  names: string[];
  /** Sets that ran it. */
  sets: number;
  /** When the newest of those was created; null when none. */
  lastSetAt: string | null;
}

/**
 * What fetching a version's archive (WorkerLink.suiteArchive) fails with when
 * the version is not known to the service or its bytes are gone (retention
 * removed an unused version): permanent, never worth a retry.
 */
export class SuiteArchiveGoneError extends Error {
  readonly code = 'SUITE_ARCHIVE_GONE';
  constructor(
    readonly id: string,
    reason: string,
  ) {
    super(`suite version ${id}: ${reason}`);
    this.name = 'SuiteArchiveGoneError';
  }
}

/** Largest LISTING_FILE accepted: a listing of many thousand cases fits many times over. */
export const MAX_LISTING_BYTES = 16 * 1024 * 1024;

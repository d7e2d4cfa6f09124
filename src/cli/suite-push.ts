/**
 * Pushing a suite version from a checkout: read its runset.config.yaml (tests
 * only: environments come from the server), list its Playwright and framework
 * entries with the checkout's own installed frameworks, pack the folder with that listing, and
 * upload it only when the server lacks that id (the same content uploads
 * nothing). Used by `runset suites push` and `runset trigger --suite`; loaded
 * only when one of them runs (it reaches the config parser and Playwright's
 * locator, which a plain `trigger` never needs).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunsetClient } from '../client/client.js';
import { ciLabels } from '../client/ci-labels.js';
import type { TextSink } from '../client/redact.js';
import { ConfigError } from '../config/suite.js';
import { listSuiteForUpload } from '../config/suite-listing.js';
import { parseSuiteTests } from '../config/suite-tests.js';
import { SUITE_CONFIG_FILE } from '../core/suites.js';
import { packSuite, SuitePackError } from '../suites/pack.js';

export interface PushOptions {
  dir: string;
  /** Points this name at the version too. */
  name?: string | undefined;
  /** The commit label; default the CI's (GITHUB_SHA, CI_COMMIT_SHA, …). */
  commit?: string | undefined;
}

export interface PushResult {
  id: string;
  size: number;
  files: number;
  /** False: the server already had this version; nothing was sent. */
  uploaded: boolean;
}

/** A push that cannot be made; the message says why and what to do. */
export class PushFailure extends Error {}

export async function pushSuite(client: RunsetClient, options: PushOptions, env: Readonly<Record<string, string | undefined>>, stderr: TextSink): Promise<PushResult> {
  const root = path.resolve(options.dir);
  const file = path.join(root, SUITE_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new PushFailure(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); --suite and push take the folder of a suite's ${SUITE_CONFIG_FILE}`);
  }
  let packed;
  try {
    const config = parseSuiteTests(text, file, null, 'disk');
    if (config.ignored.length > 0) {
      stderr.write(`runset: note: ${SUITE_CONFIG_FILE}'s ${config.ignored.join(' and ')} ${config.ignored.length > 1 ? 'are' : 'is'} ignored in an uploaded suite: environments, variables, webhooks and code hosts come from the server's config\n`);
    }
    const listing = await listSuiteForUpload(config);
    packed = await packSuite(root, { listing });
    for (const note of packed.notes) stderr.write(`runset: note: ${note}\n`);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SuitePackError) throw new PushFailure(error.message, { cause: error });
    throw error;
  }
  const commit = options.commit ?? ciLabels(env).commit;
  const known = await client.getSuiteVersion(packed.id);
  let uploaded = false;
  if (known === null) {
    const result = await client.uploadSuiteVersion(packed.id, packed.archive, { ...(commit ? { commit } : {}), ...(options.name ? { name: options.name } : {}) });
    uploaded = result.created;
  } else if (options.name !== undefined && !known.names.includes(options.name)) {
    await client.nameSuiteVersion(options.name, packed.id);
  }
  return { id: packed.id, size: packed.size, files: packed.files, uploaded };
}

/** One line for people: `suite 3f2a…: 41.2 kB, 37 files, uploaded, named main`. */
export function describePush(result: PushResult, name: string | undefined): string {
  const size = result.size >= 1_000_000 ? `${(result.size / 1_000_000).toFixed(1)} MB` : `${(result.size / 1000).toFixed(1)} kB`;
  const what = result.uploaded ? 'uploaded' : 'already on the server, nothing uploaded';
  return `suite ${result.id}: ${size}, ${result.files} files, ${what}${name ? `, named ${name}` : ''}`;
}

/**
 * Suite versions on the API (src/core/wire-suites.ts says each route's shape):
 * uploading a version's archive, reading versions, naming one.
 *
 * An upload is streamed to a scratch file (never held in memory, cut off past
 * `--max-suite-size`), then checked in full before anything is stored: its
 * hash must be the id it is sent under, every entry must pass the archive rule
 * (src/suites/entries.ts), its runset.config.yaml must be valid against this
 * server's environments, and its Playwright listing must read. The API never
 * runs the version's code: the listing came with it (src/core/suites.ts).
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '../../core/typebox.js';
import { RunsetError } from '../../core/errors.js';
import { DEFAULT_MAX_SUITE_BYTES, SUITE_CONFIG_FILE, VERSION_ROOT, type SuiteVersionInfo } from '../../core/suites.js';
import { BlobTooLargeError, type SuiteArchiveStore } from '../../artifacts/blobs.js';
import { NameSuiteBody, SuiteId, SuiteVersionList, SuiteVersionView, UploadSuiteQuery } from '../../core/wire-suites.js';
import { ConfigError } from '../../config/suite.js';
import { applySuiteListing } from '../../config/suite-listing.js';
import { parseSuiteTests } from '../../config/suite-tests.js';
import { inspectSuiteArchive, SuiteRefusal } from '../../suites/inspect.js';
import type { AppDeps } from '../deps.js';
import { withUploadedFile } from '../upload-file.js';
import { BODY_PROBLEMS, named, problems, SECURED } from './common.js';

const SuiteParams = Type.Object({ id: SuiteId });

/** Where archives go when this API process was given no archive store (tests that build the app alone): nowhere. */
const UNKEPT_SUITES: SuiteArchiveStore = {
  maxBytes: DEFAULT_MAX_SUITE_BYTES,
  put: () => Promise.reject(new Error('this API process keeps no suite archives')),
  open: () => Promise.resolve(undefined),
  remove: () => Promise.resolve(),
};
const GZIP_TYPES = ['application/gzip', 'application/x-gzip', 'application/octet-stream'];

export const suiteRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  // The body is the archive's bytes, streamed as they come.
  app.addContentTypeParser(GZIP_TYPES, (_request, payload, done) => done(null, payload));
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const archives = deps.suiteArchives ?? UNKEPT_SUITES;

  api.put('/suites/:id', {
    schema: {
      summary: 'Upload a suite version: the gzipped tar of a suite folder, under the SHA-256 of its bytes',
      description: 'Body: the archive (application/gzip). 201 when stored (also when the version was recorded but its bytes were missing: they are stored again), 200 when this version was already stored (nothing changes). Refused with nothing stored: 400 when the bytes\' hash is not the id, 413 past the size limit, 422 when the archive or its config breaks a rule (the detail says which). `runset suites push DIR` and `runset trigger --suite DIR` make and send it.',
      tags: ['Suites'],
      operationId: 'uploadSuite',
      security: SECURED,
      params: SuiteParams,
      querystring: UploadSuiteQuery,
      consumes: GZIP_TYPES,
      response: { 200: named(SuiteVersionView, 'Already stored'), 201: named(SuiteVersionView, 'Stored'), ...problems(400, 401, 403, 413, 415, 422) },
    },
  }, async (request, reply) => {
    if (!(request.body instanceof Readable)) throw new RunsetError('unsupported_media_type', 'send the suite archive\'s bytes as application/gzip (a gzipped tar; `runset suites push DIR` makes one)');
    const { id } = request.params;
    const known = await deps.store.suiteVersions.get(id);
    if (known && (await hasBytes(known.location))) {
      request.body.resume(); // the same content is the same version: nothing more to store
      await nameIt(request.query.name, id);
      return reply.code(200).send(await view(id));
    }
    // A version whose bytes are gone (a restore without them, a lost disk) takes
    // them back from a push of the same archive; its row stays as recorded.
    const limit = { maxBytes: archives.maxBytes, what: 'suite archive', declared: Number(request.headers['content-length']) };
    try {
      return await withUploadedFile(request.body, limit, async (file) => {
        const inspected = await inspectSuiteArchive(file, { id, maxBytes: archives.maxBytes });
        const tests = testsOf(inspected.configText, inspected.listing, inspected.paths);
        const { location } = await archives.put(id, file);
        if (known) {
          if (location !== known.location) throw new Error(`suite version ${id} is recorded at ${known.location}, its bytes were stored again at ${location}`);
          request.log.warn({ suite: id, size: inspected.size }, 'suite version\'s missing archive stored again');
        } else {
          await deps.store.suiteVersions.put({ id, size: inspected.size, files: inspected.files, commit: request.query.commit ?? null, tests, location });
          request.log.info({ suite: id, size: inspected.size, files: inspected.files, tests: tests.length }, 'suite version stored');
        }
        await nameIt(request.query.name, id);
        return reply.code(201).send(await view(id));
      });
    } catch (err) {
      throw refusalOf(err, archives.maxBytes);
    }
  });

  /** Whether the archive's bytes are where its row says. */
  async function hasBytes(location: string): Promise<boolean> {
    if (archives === UNKEPT_SUITES) return true; // keeping none, this process cannot take them back either
    const bytes = await archives.open(location);
    bytes?.destroy();
    return bytes !== undefined;
  }

  api.get('/suites/:id', {
    schema: {
      summary: 'One suite version: size, files, commit, names, the sets that ran it',
      description: 'What `runset suites push` asks before it uploads: 404 when this server does not have the version, or has its record but not its archive\'s bytes (then PUT it).',
      tags: ['Suites'],
      operationId: 'getSuite',
      security: SECURED,
      params: SuiteParams,
      response: { 200: named(SuiteVersionView, 'The version'), ...problems(400, 401, 403, 404) },
    },
  }, async (request) => {
    const found = await deps.store.suiteVersions.get(request.params.id);
    // A version whose bytes are missing is not had: the pusher sends them again (PUT stores them).
    if (found && !(await hasBytes(found.location))) {
      throw new RunsetError('not_found', `suite version ${found.id} is recorded but its archive's bytes are missing from this server; push it again (\`runset suites push DIR\`) to store them`);
    }
    return view(request.params.id);
  });

  api.get('/suites', {
    schema: {
      summary: 'Every stored suite version, newest first',
      description: 'With each version\'s names, commit, size and the sets that ran it (the dashboard\'s Suites page).',
      tags: ['Suites'],
      operationId: 'listSuites',
      security: SECURED,
      response: { 200: named(SuiteVersionList, 'The versions'), ...problems(401, 403) },
    },
  }, async () => ({ versions: (await deps.store.suiteVersions.list()).map(viewOf) }));

  api.post('/suite-names', {
    schema: {
      summary: 'Point a name (main, pr-123) at a stored version; a set may then name the suite by it',
      description: 'A name points at one version at a time: naming another version moves it. 422 when the version is not stored.',
      tags: ['Suites'],
      operationId: 'nameSuite',
      security: SECURED,
      body: named(NameSuiteBody),
      response: { 200: named(SuiteVersionView, 'The version, with its names'), ...problems(...BODY_PROBLEMS, 401, 403, 422) },
    },
  }, async (request) => {
    if (!(await deps.store.suiteVersions.get(request.body.id))) throw unknownVersion(request.body.id);
    await nameIt(request.body.name, request.body.id);
    return view(request.body.id);
  });

  async function nameIt(name: string | undefined, id: string): Promise<void> {
    if (name !== undefined) await deps.store.suiteVersions.setName(name, id);
  }

  async function view(id: string) {
    const found = await deps.store.suiteVersions.get(id);
    if (!found) throw new RunsetError('not_found', `no suite version ${id}; push it with \`runset suites push DIR\``);
    return viewOf(found);
  }

  /** The version's tests for this server: its config against this server's environments, its Playwright and framework entries as its listing says. */
  function testsOf(configText: string, listing: unknown, paths: string[]) {
    const config = parseSuiteTests(configText, path.posix.join(VERSION_ROOT, SUITE_CONFIG_FILE), deps.suite().environments, paths);
    return applySuiteListing(config, listing).tests;
  }
  return Promise.resolve();
};

function viewOf(v: SuiteVersionInfo): SuiteVersionView {
  return { id: v.id, size: v.size, files: v.files, createdAt: v.createdAt, commit: v.commit, names: v.names, sets: v.sets, lastSetAt: v.lastSetAt };
}

function unknownVersion(id: string): RunsetError {
  return new RunsetError('unknown_suite', `no suite version ${id} is stored; upload it first (\`runset suites push DIR\`)`);
}

function tooLarge(max: number, size?: number): RunsetError {
  const what = size === undefined ? 'the suite archive is' : `the suite archive is ${size} bytes,`;
  return new RunsetError('body_too_large', `${what} over this server's limit of ${max} bytes (--max-suite-size); leave out what the tests do not need (.runsetignore)`);
}

/** What an upload's failure answers: a refusal of the archive or its config is the client's (4xx), anything else the server's. */
function refusalOf(err: unknown, max: number): unknown {
  if (err instanceof BlobTooLargeError) return tooLarge(max, err.size);
  if (err instanceof SuiteRefusal) {
    if (err.code === 'hash_mismatch') return new RunsetError('suite_hash_mismatch', err.message);
    if (err.code === 'too_large') return tooLarge(max);
    return new RunsetError('suite_refused', err.message);
  }
  if (err instanceof ConfigError) return new RunsetError('suite_refused', `the suite's ${SUITE_CONFIG_FILE}: ${err.message}`);
  return err;
}

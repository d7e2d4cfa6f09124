/**
 * Artifact bytes from workers over HTTP, into this API's blob store:
 * PUT /api/v0/worker/artifacts/{id} streams one file in (application/octet-stream,
 * the same size limit as a direct worker's: 413 past it), and POST
 * /api/v0/worker/artifacts/remove takes back bytes whose outcome could not be recorded.
 *
 * The bytes are stored under a fresh name the API chooses (the `{id}` in the
 * path only names the upload), so an upload never replaces stored bytes. The
 * location it answers is signed with an HMAC under the service's secret key,
 * and a finish records (or a remove deletes) only locations whose signature
 * holds: a worker key can name no bytes but those it uploaded itself, never
 * another set's trace.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '../../core/typebox.js';
import { RunsetError } from '../../core/errors.js';
import { ArtifactStored, RemoveArtifactsBody } from '../../core/wire-worker.js';
import { ArtifactTooLargeError, DEFAULT_MAX_ARTIFACT_BYTES, type ArtifactBlobStore } from '../../artifacts/blobs.js';
import type { AppDeps } from '../deps.js';
import { withUploadedFile } from '../upload-file.js';
import { BEARER_ONLY, BODY_PROBLEMS, named, problems } from './common.js';

/** Where bytes go when this API process was given no blob store (tests that build the app alone): nowhere. */
export const UNKEPT_ARTIFACTS: ArtifactBlobStore = {
  maxBytes: DEFAULT_MAX_ARTIFACT_BYTES,
  put: () => Promise.reject(new Error('this API process keeps no artifact bytes')),
  open: () => Promise.resolve(undefined),
  remove: () => Promise.resolve(),
};

const SIGNATURE_LENGTH = 43; // base64url of a SHA-256

function signatureOf(key: Buffer, location: string): string {
  return createHmac('sha256', key).update(`runset artifact location\n${location}`).digest('base64url');
}

/** `<signature>.<location>`: what an upload answers and a finish must send back. */
export function signLocation(key: Buffer, location: string): string {
  return `${signatureOf(key, location)}.${location}`;
}

/** The location a signed one names, or undefined when its signature does not hold. */
export function openSignedLocation(key: Buffer, signed: string): string | undefined {
  const location = signed.slice(SIGNATURE_LENGTH + 1);
  const given = Buffer.from(signed.slice(0, SIGNATURE_LENGTH));
  const expected = Buffer.from(signatureOf(key, location));
  return signed[SIGNATURE_LENGTH] === '.' && given.length === expected.length && timingSafeEqual(given, expected) ? location : undefined;
}

const ArtifactParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The artifact\'s id (a fresh uuid the worker chose).' }) });

export const workerArtifactRoutes: FastifyPluginAsync<{ deps: AppDeps; blobs: ArtifactBlobStore }> = (app, { deps, blobs }) => {
  // The body is the file's bytes, streamed to a scratch file as they come (never held in memory).
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.put(
    '/artifacts/:id',
    {
      schema: {
        summary: 'Upload one artifact\'s bytes (streamed), before recording it with the member\'s outcome',
        description: 'Body: the file, application/octet-stream. Answers the signed location to record with the outcome (finish). Over the artifact size limit: 413.',
        tags: ['Worker protocol'],
        operationId: 'uploadArtifact',
        security: BEARER_ONLY,
        params: ArtifactParams,
        consumes: ['application/octet-stream'],
        response: { 200: named(ArtifactStored, 'Stored; record this location'), ...problems(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      // JSON is parsed by the app's own parser before this runs: only octet-stream arrives as a stream.
      if (!(request.body instanceof Readable)) throw new RunsetError('unsupported_media_type', 'send the artifact\'s bytes as application/octet-stream');
      try {
        const limit = { maxBytes: blobs.maxBytes, what: 'artifact', declared: Number(request.headers['content-length']) };
        return await withUploadedFile(request.body, limit, async (file) => {
          // The bytes go under a name of the API's choosing, never the worker's id: an upload
          // makes new bytes and never overwrites any (another member's screenshot included),
          // and its signed location names only what this upload stored.
          const { location, size } = await blobs.put(randomUUID(), file);
          return { location: signLocation(deps.secretKey, location), size };
        });
      } catch (err) {
        throw err instanceof ArtifactTooLargeError ? tooLarge(err) : err;
      }
    },
  );

  api.post(
    '/artifacts/remove',
    {
      schema: {
        summary: 'Remove uploaded bytes whose outcome could not be recorded (the lease was lost)',
        description: 'Only locations an upload of this service answered (signed) are accepted.',
        tags: ['Worker protocol'],
        operationId: 'removeArtifacts',
        security: BEARER_ONLY,
        body: named(RemoveArtifactsBody),
        response: { 204: { type: 'null', description: 'Removed (bytes already gone are fine).' }, ...problems(...BODY_PROBLEMS, 401, 403) },
      },
    },
    async (request, reply) => {
      const locations = request.body.locations.map((signed) => {
        const location = openSignedLocation(deps.secretKey, signed);
        if (location === undefined) throw new RunsetError('invalid_body', 'a location is not one this service\'s upload answered; only uploaded bytes can be removed');
        return location;
      });
      await blobs.remove(locations);
      return reply.code(204).send(null);
    },
  );
  return Promise.resolve();
};

function tooLarge(err: ArtifactTooLargeError): RunsetError {
  return new RunsetError('body_too_large', `${err.message}: the artifact is not kept`);
}

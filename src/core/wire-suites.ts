/**
 * Wire shapes of suite versions (src/core/suites.ts) on the API:
 * - `PUT /api/v0/suites/{id}` (role trigger): the archive's bytes
 *   (`Content-Type: application/gzip`), `{id}` their SHA-256; query `commit`
 *   and `name` optional. 201 with the version when stored, 200 when it already
 *   was (the same content is the same version); 400 when the bytes' hash is
 *   not `{id}`, 413 past the size limit, 422 when the archive or its config is
 *   refused (the reason in `detail`).
 * - `GET /api/v0/suites/{id}` (read): the version, or 404.
 * - `GET /api/v0/suites` (read): every version, newest first.
 * - `POST /api/v0/suite-names` (trigger): `{ name, id }` points a name at a version.
 * - `GET /api/v0/worker/suites/{id}` (the worker protocol): the archive's bytes.
 * - The create body's `suite` (src/core/wire.ts): a version's id or name.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { SUITE_ID, SUITE_NAME } from './suites.js';

export const SuiteId = Type.String({ pattern: SUITE_ID.source, description: 'A suite version\'s id: the SHA-256 (lowercase hex) of its archive.' });
export const SuiteName = Type.String({ pattern: SUITE_NAME.source, description: 'A published name of a version (main, pr-123, release/2.4).' });

export const SuiteVersionView = Type.Object(
  {
    id: SuiteId,
    size: Type.Integer({ minimum: 0, description: 'Archive size, bytes.' }),
    files: Type.Integer({ minimum: 0, description: 'Files in the archive.' }),
    createdAt: Type.String({ format: 'date-time' }),
    commit: Type.Union([Type.String(), Type.Null()], { description: 'The commit the uploader named, when known.' }),
    names: Type.Array(Type.String(), { description: 'Names that point at it now.' }),
    sets: Type.Integer({ minimum: 0, description: 'Sets that ran it.' }),
    lastSetAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the newest of those was created.' }),
  },
  { additionalProperties: false, $id: 'SuiteVersion' },
);
export type SuiteVersionView = Static<typeof SuiteVersionView>;

export const SuiteVersionList = Type.Object({ versions: Type.Array(SuiteVersionView) }, { additionalProperties: false, $id: 'SuiteVersionList' });
export type SuiteVersionList = Static<typeof SuiteVersionList>;

export const UploadSuiteQuery = Type.Object(
  {
    commit: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The commit the suite was packed from (a label; shown with the sets that run it).' })),
    name: Type.Optional(SuiteName),
  },
  { additionalProperties: false },
);
export type UploadSuiteQuery = Static<typeof UploadSuiteQuery>;

export const NameSuiteBody = Type.Object({ name: SuiteName, id: SuiteId }, { additionalProperties: false, $id: 'NameSuiteBody' });
export type NameSuiteBody = Static<typeof NameSuiteBody>;

/** What a set's details say of the version it ran; null: the server's own config. */
export const SetSuiteView = Type.Object(
  { id: SuiteId, names: Type.Array(Type.String()), commit: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false, $id: 'SetSuite' },
);
export type SetSuiteView = Static<typeof SetSuiteView>;

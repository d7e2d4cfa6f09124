/**
 * Wire shapes of quarantine (GET, POST and DELETE /api/v0/quarantine), as
 * TypeBox schemas: validation, serialisation, the OpenAPI document, the CLI
 * and the dashboard take them from here. What quarantine does to a set's
 * status: failsSet, src/core/moves.ts.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { DateTime, LIMITS, refTo } from './wire.js';
import { QUARANTINE_DAYS } from './quarantine.js';


const Env = Type.String({ minLength: 1, maxLength: LIMITS.envNameLength, description: 'A configured environment this key may see.' });
const TestName = Type.String({ minLength: 1, maxLength: 1024, description: "The test's exact name, as the members list shows it." });

export const QuarantineEntryView = Type.Object(
  {
    env: Type.String(),
    name: Type.String(),
    reason: Type.String(),
    until: { ...DateTime, description: 'When the quarantine ends by itself.' },
    createdAt: { ...DateTime, description: 'When it was added (or last replaced).' },
    createdBy: Type.Union([Type.Object({ keyId: Type.String(), keyName: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'The key that added it; null when that key is unknown.',
    }),
  },
  { additionalProperties: false, $id: 'QuarantineEntry' },
);
export type QuarantineEntryView = Static<typeof QuarantineEntryView>;

export const QuarantineList = Type.Object({ quarantine: Type.Array(refTo(QuarantineEntryView)) }, { additionalProperties: false, $id: 'QuarantineList' });
export type QuarantineList = Static<typeof QuarantineList>;

export const QuarantineAdded = Type.Object(
  {
    entry: refTo(QuarantineEntryView),
    knownTest: Type.Boolean({
      description: 'Whether a test of this name has run in the environment or is declared by its configuration: false means the name may be a typo, and the quarantine would never apply.',
    }),
  },
  { additionalProperties: false, $id: 'QuarantineAdded' },
);
export type QuarantineAdded = Static<typeof QuarantineAdded>;

export const QuarantineBody = Type.Object(
  {
    env: Env,
    name: TestName,
    reason: Type.String({ minLength: 1, maxLength: 500, description: 'Why (an issue link, who owns the fix): shown wherever the quarantine is.' }),
    until: Type.Optional({
      ...DateTime,
      description: `When the quarantine ends by itself: in the future, at most ${QUARANTINE_DAYS.max} days ahead (default ${QUARANTINE_DAYS.default} days from now).`,
    }),
  },
  { additionalProperties: false },
);
export type QuarantineBody = Static<typeof QuarantineBody>;

export const QuarantineQuery = Type.Object({ env: Type.Optional(Env) }, { additionalProperties: false });
export type QuarantineQuery = Static<typeof QuarantineQuery>;

export const RemoveQuarantineQuery = Type.Object({ env: Env, name: TestName }, { additionalProperties: false });
export type RemoveQuarantineQuery = Static<typeof RemoveQuarantineQuery>;

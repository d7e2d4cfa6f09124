/**
 * PostgreSQL migrations from 16 on, apart from ./migrations.ts only to keep each
 * file short. Append only: a shipped migration never changes.
 */
/** A PgMigration (./migrations.ts), spelled out: that file imports this one. */
export const LATER_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: (schema: string) => string }> = [
  {
    version: 16,
    name: 'key roles: worker',
    sql: (s: string) => `
      -- Worker keys may use the worker protocol and nothing else (src/auth/policy.ts).
      -- Migration 10's CHECK took PostgreSQL's default name, <table>_<column>_check.
      ALTER TABLE ${s}.api_keys
        DROP CONSTRAINT api_keys_role_check,
        ADD CONSTRAINT api_keys_role_check CHECK (role IN ('read', 'trigger', 'admin', 'worker'));
    `,
  },
];

/**
 * `runset keys create|list|revoke` — straight on the store, so they work whether
 * or not a server runs; a running server sees the change within a second.
 */
import type { Command } from 'commander';
import { storeOptions, withStore, type StoreFlags } from './store-options.js';
import type { KeyGrant } from '../auth/keys.js';
import { isKeyRole } from '../auth/policy.js';
import { KEY_ROLES, type ApiKeyRecord } from '../core/keys.js';
import { KEY_NAME_PATTERN } from '../core/wire-keys.js';

const NAME_PATTERN = new RegExp(KEY_NAME_PATTERN);

interface CreateFlags extends StoreFlags {
  name: string;
  role: string;
  env?: string;
  expires?: string;
}

/** The role, environments and expiry asked for, or an error saying what is accepted. */
async function grantOf(flags: CreateFlags): Promise<KeyGrant> {
  const { expiryAfter } = await import('../auth/keys.js');
  if (!isKeyRole(flags.role)) throw new Error(`--role "${flags.role}" is not a role; use one of ${KEY_ROLES.join(', ')}`);
  const envs = flags.env === undefined ? null : flags.env.split(',').map((e) => e.trim());
  if (envs && (envs.length === 0 || envs.some((e) => e === ''))) throw new Error(`--env "${flags.env}" must be environment names separated by commas, e.g. staging,preview`);
  return { role: flags.role, envs: envs && [...new Set(envs)], expiresAt: flags.expires === undefined ? null : expiryAfter(flags.expires) };
}

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');

  storeOptions(keys.command('create').description('create a key and print its token once, alone on stdout'))
    .requiredOption('--name <name>', 'what the key is for, e.g. "github-actions"')
    .option('--role <role>', `what it may do: ${KEY_ROLES.join(', ')} (read < trigger < admin; worker: the worker protocol only)`, 'trigger')
    .option('--env <names>', 'only sets of these environments, comma separated (default: every environment)')
    .option('--expires <duration>', 'refused after this long, e.g. 90d (default: never)')
    .action(async (flags: CreateFlags) => {
      if (!NAME_PATTERN.test(flags.name)) {
        throw new Error(`--name "${flags.name}" is not accepted; use 1-100 letters, digits, spaces or . _ @ -`);
      }
      const grant = await grantOf(flags);
      const { createKey } = await import('../auth/keys.js');
      const { token, key } = await withStore(flags, (store) => createKey(store, flags.name, grant));
      process.stdout.write(`${token}\n`);
      process.stderr.write(`created key ${key.id} (${key.name}, ${describeScope(key)}); the token above is shown only this once\n`);
    });

  storeOptions(keys.command('list').description('list keys (id, name, role, environments, expiry, created, last used, revoked); never tokens'))
    .option('--json', 'print JSON')
    .action(async (flags: StoreFlags & { json?: boolean }) => {
      const list = await withStore(flags, (store) => store.keys.list());
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return;
      }
      for (const k of list) {
        process.stdout.write(
          [k.id, JSON.stringify(k.name), `role=${k.role}`, `envs=${k.envs?.join(',') ?? '*'}`, `expires=${k.expiresAt ?? '-'}`, `created=${k.createdAt}`, `last_used=${k.lastUsedAt ?? '-'}`, `revoked=${k.revokedAt ?? '-'}`].join('  ') + '\n',
        );
      }
    });

  storeOptions(keys.command('revoke').description('revoke a key by id (takes effect within a second)'))
    .argument('<id>', 'key id from `runset keys list`')
    .action(async (id: string, flags: StoreFlags) => {
      const found = await withStore(flags, (store) => store.keys.revoke(id));
      if (!found) throw new Error(`no key with id ${id}; see \`runset keys list\``);
      process.stderr.write(`revoked key ${id}\n`);
    });
}

/** "role trigger, envs staging,preview, expires 2027-…" for messages. */
function describeScope(key: ApiKeyRecord): string {
  return `role ${key.role}, ${key.envs ? `envs ${key.envs.join(',')}` : 'every environment'}, ${key.expiresAt ? `expires ${key.expiresAt}` : 'never expires'}`;
}

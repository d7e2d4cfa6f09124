/**
 * `/keys` — API keys, for an admin key: who has which role, where and until
 * when; make a key (its token is shown once, here, and never again) or revoke
 * one. The navigation shows this page only to a key that may list keys.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { KEY_ROLES, type KeyRole } from '../../../core/keys.js';
import type { EnvironmentView } from '../../../core/wire-dashboard.js';
import type { KeyView } from '../../../core/wire-keys.js';
import { api } from '../api.js';
import { Alert, Time } from '../components.js';
import { useMay } from '../access.js';

export function KeysPage() {
  const may = useMay();
  const [keys, setKeys] = useState<KeyView[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [token, setToken] = useState<{ name: string; value: string } | undefined>(undefined);

  const reload = () =>
    api.listKeys().then(
      (list) => setKeys(list),
      (err: Error) => setError(`Could not load the keys: ${err.message}`),
    );
  useEffect(() => void reload(), []);

  const revoke = async (key: KeyView) => {
    if (!window.confirm(`Revoke the key "${key.name}"? Anything using it is refused within a second.`)) return;
    try {
      await api.revokeKey(key.id);
      await reload();
    } catch (err) {
      setError(`Could not revoke it: ${(err as Error).message}`);
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Keys</h1>
      {error && <Alert>{error}</Alert>}
      {token && <NewToken name={token.name} token={token.value} />}
      {keys === undefined ? (
        <p class="muted">Loading keys…</p>
      ) : (
        <table class="stack keys-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Environments</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-key={k.name}>
                <td data-label="Name">{k.name}</td>
                <td data-label="Role">{k.role}</td>
                <td data-label="Environments">{k.envs ? k.envs.join(', ') : 'every one'}</td>
                <td data-label="Expires">{k.expiresAt ? <Time iso={k.expiresAt} /> : 'never'}</td>
                <td data-label="Last used"><Time iso={k.lastUsedAt} /></td>
                <td data-label="">
                  {k.revokedAt ? (
                    <span class="muted">revoked</span>
                  ) : (
                    may('revokeKey') && (
                      <button type="button" class="danger" onClick={() => void revoke(k)}>
                        Revoke<span class="visually-hidden"> {k.name}</span>
                      </button>
                    )
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {may('createKey') && (
        <NewKeyForm
          onCreated={(name, value) => {
            setToken({ name, value });
            void reload();
          }}
        />
      )}
    </>
  );
}

/** The new key's token, once: the server keeps only its hash. */
function NewToken({ name, token }: { name: string; token: string }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => ref.current?.select(), [token]);
  return (
    <div class="new-token" role="status">
      <p>
        The key <strong>{name}</strong> was made. Copy its token now: it is not shown again.
      </p>
      <label>
        Token
        <input ref={ref} class="mono" type="text" readOnly value={token} aria-label="New key token" />
      </label>
    </div>
  );
}

function NewKeyForm({ onCreated }: { onCreated: (name: string, token: string) => void }) {
  const [environments, setEnvironments] = useState<EnvironmentView[]>([]);
  const [name, setName] = useState('');
  const [role, setRole] = useState<KeyRole>('trigger');
  const [envs, setEnvs] = useState<string[]>([]);
  const [expires, setExpires] = useState('90d');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.environments().then(setEnvironments, () => undefined);
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.createKey({
        name: name.trim(),
        role,
        ...(envs.length > 0 ? { envs } : {}),
        ...(expires.trim() ? { expires: expires.trim() } : {}),
      });
      setName('');
      onCreated(created.key.name, created.token);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="trigger new-key" onSubmit={(e) => void submit(e)} noValidate>
      <h2>Make a key</h2>
      {error && <Alert>{error}</Alert>}
      <label>
        Name
        <input name="name" type="text" required maxLength={100} value={name} placeholder="e.g. github-actions" onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Role
        <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as KeyRole)}>
          {KEY_ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Environments (none checked: every one)</legend>
        {environments.map((env) => (
          <label key={env.name} class="check">
            <input
              type="checkbox"
              name="envs"
              value={env.name}
              checked={envs.includes(env.name)}
              onChange={(e) => setEnvs(e.currentTarget.checked ? [...envs, env.name] : envs.filter((x) => x !== env.name))}
            />{' '}
            {env.name}
          </label>
        ))}
      </fieldset>
      <label>
        Expires after (empty: never)
        <input name="expires" type="text" value={expires} placeholder="90d" onInput={(e) => setExpires(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
        {busy ? 'Making…' : 'Make the key'}
      </button>
    </form>
  );
}

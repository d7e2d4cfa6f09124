/**
 * `/trigger` — start a set by hand. The form offers exactly the environment's
 * declared variables, so an override can only name a declared one (the server
 * checks again: the config may have been reloaded since the page loaded).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EnvironmentView } from '../../../core/wire-dashboard.js';
import { api, ApiError } from '../api.js';
import { Alert } from '../components.js';
import { navigate } from '../router.js';
import { useMay, useSession } from '../access.js';

const MAX_VALUE = 64 * 1024;

export function TriggerPage({ search }: { search: URLSearchParams }) {
  const [environments, setEnvironments] = useState<EnvironmentView[] | undefined>(undefined);
  const [envName, setEnvName] = useState(search.get('env') ?? '');
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const alertRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    api.environments().then(
      (list) => {
        setEnvironments(list);
        setEnvName((current) => (list.some((e) => e.name === current) ? current : (list[0]?.name ?? '')));
      },
      (err: Error) => setError(`Could not load the environments: ${err.message}`),
    );
  }, []);
  useEffect(() => {
    if (error) alertRef.current?.focus();
  }, [error]);

  const env = environments?.find((e) => e.name === envName);
  const session = useSession();
  const may = useMay();

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!env) return;
    const overrides: Record<string, string> = {};
    for (const variable of env.variables) {
      const value = values[variable.name] ?? '';
      if (value === '') continue;
      if (value.length > MAX_VALUE) return setError(`${variable.name} is longer than 64 KiB.`);
      overrides[variable.name] = value;
    }
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.createSet(env.name, overrides);
      navigate(`/sets/${created.testRunSetId}`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : `Could not start the set: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  if (session && !may('createTestRunSet')) {
    return (
      <>
        <h1 tabIndex={-1}>Run a set</h1>
        <p class="empty">This key has role {session.key.role}: it may look at sets, not start them.</p>
      </>
    );
  }
  return (
    <>
      <h1 tabIndex={-1}>Run a set</h1>
      <div ref={alertRef} tabIndex={-1}>
        {error && <Alert>{error}</Alert>}
      </div>
      {environments === undefined ? (
        <p class="muted">Loading environments…</p>
      ) : environments.length === 0 ? (
        <p class="empty">The config declares no environment.</p>
      ) : (
        <form class="trigger" onSubmit={(e) => void submit(e)} noValidate>
          <label>
            Environment
            <select name="env" value={envName} onChange={(e) => {
              setEnvName(e.currentTarget.value);
              setValues({});
            }}>
              {environments.map((e) => (
                <option key={e.name} value={e.name}>
                  {e.name}
                </option>
              ))}
            </select>
          </label>
          {env && <p class="muted">{env.tests === 1 ? '1 test runs' : `${env.tests} tests run`} in {env.name}.</p>}
          {env && env.variables.length > 0 && (
            <fieldset>
              <legend>Overrides (leave empty to keep the configured value)</legend>
              {env.variables.map((v) => (
                <label key={v.name}>
                  <span>
                    <span class="mono">{v.name}</span>
                    {v.secret && <span class="secret-mark"> (secret)</span>}
                  </span>
                  <VariableInput
                    name={v.name}
                    secret={v.secret}
                    placeholder={v.secret ? 'secret: configured on the server' : (v.value ?? '')}
                    value={values[v.name] ?? ''}
                    onInput={(value) => setValues({ ...values, [v.name]: value })}
                  />
                  {v.accepts && <span class="muted accepts">Accepts {v.accepts}</span>}
                </label>
              ))}
            </fieldset>
          )}
          <button type="submit" class="primary" disabled={busy || !env || env.tests === 0}>
            {busy ? 'Starting…' : 'Start the set'}
          </button>
        </form>
      )}
    </>
  );
}

interface VariableInputProps {
  name: string;
  secret: boolean;
  placeholder: string;
  value: string;
  onInput: (value: string) => void;
}

/** A secret variable's override is typed into a password field: it is not shown on screen or kept by autofill. */
function VariableInput({ name, secret, placeholder, value, onInput }: VariableInputProps) {
  const common = { name, autoComplete: 'off', spellcheck: false, maxLength: MAX_VALUE, placeholder, value };
  return secret ? (
    <input {...common} type="password" onInput={(e) => onInput(e.currentTarget.value)} />
  ) : (
    <input {...common} type="text" onInput={(e) => onInput(e.currentTarget.value)} />
  );
}

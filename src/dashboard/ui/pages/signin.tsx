/** `/signin` — exchange an API key for a session cookie. The key is sent once and never kept by the page. */
import { useState } from 'preact/hooks';
import type { SessionInfo } from '../../../core/wire-dashboard.js';
import { api } from '../api.js';
import { Alert } from '../components.js';
import { navigate, safeNext } from '../router.js';

export function SignInPage({ search, onSignedIn }: { search: URLSearchParams; onSignedIn: (session: SessionInfo) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const info = await api.signIn(key.trim());
      setKey('');
      onSignedIn(info);
      navigate(safeNext(search.get('next')), true);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="signin">
      <h1 tabIndex={-1}>Sign in to runset</h1>
      <p>
        Use an API key (<code>rs_…</code>), e.g. from <code>runset keys create --name you</code>. It is exchanged for a session
        cookie and not stored by this page.
      </p>
      {error && <Alert>{error}</Alert>}
      <form onSubmit={(e) => void submit(e)}>
        <label>
          API key
          <input
            name="key"
            type="password"
            autoComplete="off"
            spellcheck={false}
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}

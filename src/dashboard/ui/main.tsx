/** The dashboard's entry point: the frame (header, navigation, sign-out) and the page for the current path. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { api } from './api.js';
import { interceptLinks, navigate, useLocation, type Route } from './router.js';
import { SetsPage } from './pages/sets.js';
import { SetPage } from './pages/set.js';
import { MemberPage } from './pages/member.js';
import { TriggerPage } from './pages/trigger.js';
import { WorkersPage } from './pages/workers.js';
import { SignInPage } from './pages/signin.js';

const TITLES: Record<Route['name'], string> = {
  sets: 'Sets',
  set: 'Set',
  member: 'Test run',
  trigger: 'Run a set',
  workers: 'Workers',
  signin: 'Sign in',
  notfound: 'Not found',
};

function App() {
  const { route, search, key } = useLocation();
  const [keyName, setKeyName] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (route.name !== 'signin' && keyName === undefined) api.session().then((s) => setKeyName(s.key.name), () => undefined);
  }, [route.name, keyName]);

  // A new page: say so in the title, and move focus to its heading so keyboard and screen-reader users start there.
  useEffect(() => {
    document.title = `${TITLES[route.name]} · runset`;
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
  }, [key, route.name]);

  const signOut = async () => {
    try {
      await api.signOut();
    } finally {
      setKeyName(undefined);
      navigate('/signin', true);
    }
  };

  const signedIn = route.name !== 'signin';
  return (
    <>
      <a class="skip" href="#main" data-native>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          runset
        </a>
        {signedIn && (
          <nav aria-label="Main">
            <a href="/" aria-current={route.name === 'sets' ? 'page' : undefined}>
              Sets
            </a>
            <a href="/trigger" aria-current={route.name === 'trigger' ? 'page' : undefined}>
              Run a set
            </a>
            <a href="/workers" aria-current={route.name === 'workers' ? 'page' : undefined}>
              Workers
            </a>
            <span class="who muted">{keyName ? `key: ${keyName}` : ''}</span>
            <button type="button" class="link" onClick={() => void signOut()}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main id="main">
        <Page route={route} search={search} onSignedIn={setKeyName} />
      </main>
    </>
  );
}

function Page({ route, search, onSignedIn }: { route: Route; search: URLSearchParams; onSignedIn: (name: string) => void }) {
  switch (route.name) {
    case 'sets':
      return <SetsPage search={search} />;
    case 'set':
      return <SetPage key={route.id} id={route.id} />;
    case 'member':
      return <MemberPage key={route.runId} setId={route.setId} runId={route.runId} />;
    case 'trigger':
      return <TriggerPage search={search} />;
    case 'workers':
      return <WorkersPage />;
    case 'signin':
      return <SignInPage search={search} onSignedIn={onSignedIn} />;
    default:
      return (
        <>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            No page here. <a href="/">See the sets</a>.
          </p>
        </>
      );
  }
}

interceptLinks();
render(<App />, document.getElementById('app')!);

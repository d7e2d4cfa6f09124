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
import { SuitesPage } from './pages/suites.js';
import { SignInPage } from './pages/signin.js';
import { KeysPage } from './pages/keys.js';
import { TestsPage } from './pages/tests.js';
import { TestPage } from './pages/test.js';
import { EnvironmentPage, EnvironmentsPage } from './pages/environments.js';
import { AccessContext, useMay } from './access.js';
import type { SessionInfo } from '../../core/wire-dashboard.js';

const TITLES: Record<Route['name'], string> = {
  sets: 'Sets',
  set: 'Set',
  member: 'Test run',
  trigger: 'Run a set',
  workers: 'Workers',
  suites: 'Suites',
  tests: 'Tests',
  test: 'Test',
  environments: 'Environments',
  environment: 'Environment',
  keys: 'Keys',
  signin: 'Sign in',
  notfound: 'Not found',
};

function App() {
  const { route, search, key } = useLocation();
  const [session, setSession] = useState<SessionInfo | undefined>(undefined);

  useEffect(() => {
    if (route.name !== 'signin' && session === undefined) api.session().then(setSession, () => undefined);
  }, [route.name, session]);

  // A new page: say so in the title, and move focus to its heading so keyboard and screen-reader users start there.
  useEffect(() => {
    document.title = `${TITLES[route.name]} · runset`;
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
  }, [key, route.name]);

  const signOut = async () => {
    try {
      await api.signOut();
    } finally {
      setSession(undefined);
      navigate('/signin', true);
    }
  };

  const signedIn = route.name !== 'signin';
  return (
    <AccessContext.Provider value={session}>
      <a class="skip" href="#main" data-native>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          runset
        </a>
        {signedIn && <MainNav route={route.name} session={session} onSignOut={() => void signOut()} />}
      </header>
      <main id="main">
        <Page route={route} search={search} onSignedIn={setSession} />
      </main>
    </AccessContext.Provider>
  );
}

/** The navigation: only the pages the signed-in key may use. */
function MainNav({ route, session, onSignOut }: { route: Route['name']; session: SessionInfo | undefined; onSignOut: () => void }) {
  const may = useMay();
  const link = (href: string, name: Route['name'], label: string) => (
    <a href={href} aria-current={route === name ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <nav aria-label="Main">
      {link('/', 'sets', 'Sets')}
      {may('createTestRunSet') && link('/trigger', 'trigger', 'Run a set')}
      {link('/tests', 'tests', 'Tests')}
      {link('/environments', 'environments', 'Environments')}
      {link('/workers', 'workers', 'Workers')}
      {link('/suites', 'suites', 'Suites')}
      {may('listKeys') && link('/keys', 'keys', 'Keys')}
      <span class="who muted">{session ? `key: ${session.key.name} (${session.key.role})` : ''}</span>
      <button type="button" class="link" onClick={onSignOut}>
        Sign out
      </button>
    </nav>
  );
}

function Page({ route, search, onSignedIn }: { route: Route; search: URLSearchParams; onSignedIn: (session: SessionInfo) => void }) {
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
    case 'suites':
      return <SuitesPage />;
    case 'tests':
      return <TestsPage search={search} />;
    case 'test':
      return <TestPage key={search.toString()} search={search} />;
    case 'environments':
      return <EnvironmentsPage />;
    case 'environment':
      return <EnvironmentPage key={route.env} env={route.env} />;
    case 'keys':
      return <KeysPage />;
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

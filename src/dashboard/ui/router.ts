/**
 * A path router in a few lines: the server serves the same page shell at every
 * dashboard path, and links are intercepted into history.pushState so moving
 * between pages keeps the loaded code and does not flash.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { name: 'sets' }
  | { name: 'set'; id: string }
  | { name: 'member'; setId: string; runId: string }
  | { name: 'trigger' }
  | { name: 'workers' }
  | { name: 'suites' }
  | { name: 'tests' }
  | { name: 'test' }
  | { name: 'environments' }
  | { name: 'environment'; env: string }
  | { name: 'keys' }
  | { name: 'signin' }
  | { name: 'notfound' };

const CHANGE = 'runset:navigate';

export function parseRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { name: 'sets' };
  if (pathname === '/trigger') return { name: 'trigger' };
  if (pathname === '/workers') return { name: 'workers' };
  if (pathname === '/suites') return { name: 'suites' };
  if (pathname === '/tests') return { name: 'tests' };
  if (pathname === '/test') return { name: 'test' };
  if (pathname === '/environments') return { name: 'environments' };
  if (pathname === '/keys') return { name: 'keys' };
  if (pathname === '/signin') return { name: 'signin' };
  const member = /^\/sets\/([^/]+)\/runs\/([^/]+)$/.exec(pathname);
  if (member) return { name: 'member', setId: decodeURIComponent(member[1]!), runId: decodeURIComponent(member[2]!) };
  const environment = /^\/environments\/([^/]+)$/.exec(pathname);
  if (environment) return { name: 'environment', env: decodeURIComponent(environment[1]!) };
  const set = /^\/sets\/([^/]+)$/.exec(pathname);
  if (set) return { name: 'set', id: decodeURIComponent(set[1]!) };
  return { name: 'notfound' };
}

/** A test's page: by environment and name in the query, since a name may hold any character (a Playwright title has "›" and "/"). */
export function testHref(env: string, name: string): string {
  return `/test?${new URLSearchParams({ env, name }).toString()}`;
}

export function currentPath(): string {
  return location.pathname + location.search;
}

/** Only paths of this site: `next=//evil.example` or an absolute URL must not take a signed-in user away. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(CHANGE));
  if (!replace) window.scrollTo(0, 0);
}

/** The current location, re-read on every navigation (links, back/forward). */
export function useLocation(): { route: Route; search: URLSearchParams; key: string } {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    // Effects run after paint: a link clicked between the first render and here (a fast click, a busy
    // machine) changed the URL with no listener to hear it, and the old page would stay. Read it again.
    update();
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  const url = new URL(path, location.origin);
  return { route: parseRoute(url.pathname), search: url.searchParams, key: path };
}

/** Same-origin link clicks become client-side navigations (modified clicks and downloads are left alone). */
export function interceptLinks(): void {
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download') || anchor.dataset.native !== undefined) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
}

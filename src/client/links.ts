/**
 * The dashboard page of a set, from the API's base address: the server serves
 * the dashboard at the root of the address whose `/api` the client talks to
 * (a server behind a proxy with another public address says so in its own
 * webhook links; CI reaches it at RUNSET_URL, so that is the link CI shows).
 */
export function setPageUrl(apiUrl: string, setId: string): string {
  const root = apiUrl.replace(/\/+$/, '').replace(/\/api$/, '');
  return `${root}/sets/${encodeURIComponent(setId)}`;
}

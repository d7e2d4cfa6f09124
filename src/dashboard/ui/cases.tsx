/**
 * The cases of a member's result (a command's `junit:` report), on the member's
 * page: name, status, duration and error, in report order. A case that ran has
 * its own test history (src/core/result-cases.ts), linked when the set's
 * environment is known.
 */
import { useEffect, useState } from 'preact/hooks';
import { caseTestName } from '../../core/result-cases.js';
import type { ResultCase } from '../../core/types.js';
import { api } from './api.js';
import { formatDuration } from './components.js';

const BADGE: Record<ResultCase['status'], string> = { passed: 'badge-success', failed: 'badge-fail', skipped: 'badge-waiting' };

export function CasesTable({ setId, memberName, cases }: { setId: string; memberName: string; cases: ResultCase[] }) {
  const env = useSetEnv(setId);
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const c of cases) counts[c.status]++;
  return (
    <>
      <h2>Cases</h2>
      <p class="muted">
        {cases.length} in its JUnit report: {counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped.
      </p>
      <table class="stack cases-table">
        <thead>
          <tr>
            <th scope="col">Case</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {cases.map((c, i) => (
            <tr key={i} data-case={c.name}>
              <td data-label="Case">
                {env !== undefined && c.status !== 'skipped' ? (
                  <a href={`/test?env=${encodeURIComponent(env)}&name=${encodeURIComponent(caseTestName(memberName, c.name))}`}>{c.name}</a>
                ) : (
                  c.name
                )}
              </td>
              <td data-label="Status">
                <span class={`badge ${BADGE[c.status]}`}>{c.status}</span>
              </td>
              <td data-label="Duration">{formatDuration(c.durationMs)}</td>
              <td data-label="Error" class="error-cell">
                {c.error ? <pre class="error-text">{c.error}</pre> : <span class="muted">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The set's environment, for links to the cases' histories; undefined until read (or when it cannot be). */
function useSetEnv(setId: string): string | undefined {
  const [env, setEnv] = useState<string | undefined>(undefined);
  useEffect(() => {
    api.getDetails(setId).then(
      (details) => setEnv(details.env),
      () => setEnv(undefined),
    );
  }, [setId]);
  return env;
}

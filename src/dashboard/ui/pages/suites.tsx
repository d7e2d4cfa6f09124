/** `/suites` — the uploaded suite versions: their names, commit, size, files, and the sets that ran them. */
import { useEffect, useState } from 'preact/hooks';
import type { SuiteVersionList } from '../../../core/wire-suites.js';
import { api } from '../api.js';
import { Alert, formatBytes, shortId, Time } from '../components.js';

export function SuitesPage() {
  const [list, setList] = useState<SuiteVersionList | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    api.listSuites().then(setList, (err: Error) => setError(err.message));
  }, []);

  const versions = list?.versions ?? [];
  return (
    <>
      <h1 tabIndex={-1}>Suites</h1>
      {error && <Alert>{error}</Alert>}
      <p>
        Suite versions uploaded with <code>runset trigger --suite DIR</code> or <code>runset suites push DIR</code>: each is its folder's
        content, named by its hash. A set that names one runs exactly those files; the others run the server's own tests.
      </p>
      {list && versions.length === 0 && <p class="empty">No suite versions uploaded yet.</p>}
      {versions.length > 0 && (
        <table class="stack suites-table">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Names</th>
              <th scope="col">Commit</th>
              <th scope="col">Size</th>
              <th scope="col">Sets</th>
              <th scope="col">Uploaded</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.id} data-suite={v.id}>
                <td data-label="Version" class="mono" title={v.id}>
                  {shortId(v.id)}
                </td>
                <td data-label="Names">{v.names.length ? v.names.join(', ') : <span class="muted">none</span>}</td>
                <td data-label="Commit" class="mono">
                  {v.commit ?? <span class="muted">unknown</span>}
                </td>
                <td data-label="Size">
                  {formatBytes(v.size)} <span class="muted">({v.files} files)</span>
                </td>
                <td data-label="Sets">
                  {v.sets}
                  {v.lastSetAt && (
                    <span class="muted">
                      {' '}
                      (last <Time iso={v.lastSetAt} />)
                    </span>
                  )}
                </td>
                <td data-label="Uploaded">
                  <Time iso={v.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

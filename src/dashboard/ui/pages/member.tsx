/** `/sets/:id/runs/:runId` — one member: status, error, artifacts (screenshots inline, traces in Playwright's viewer, text to open, all to download) and output. */
import { useState } from 'preact/hooks';
import { api, artifactUrl, setLoadError, type Artifact, type Member } from '../api.js';
import { Alert, FlakyBadge, formatBytes, formatDuration, isFinal, QuarantinedBadge, RestartedBadge, shortId, SkippedBadge, StatusBadge, Time } from '../components.js';
import { ranAgainText } from '../../../core/starts.js';
import { usePoll } from '../live.js';
import { CasesTable } from '../cases.js';

export function MemberPage({ setId, runId }: { setId: string; runId: string }) {
  const [member, setMember] = useState<Member | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  usePoll(
    async () => {
      try {
        const found = (await api.listMembers(setId)).find((m) => m.id === runId);
        setMember(found);
        setError(found ? undefined : 'This set has no such member.');
      } catch (err) {
        setError(setLoadError(err));
        throw err;
      }
    },
    [setId, runId],
    member === undefined || !isFinal(member.status),
  );

  return (
    <>
      <p class="crumbs">
        <a href="/">Sets</a> / <a href={`/sets/${setId}`} class="mono">{shortId(setId)}</a> / {member?.name ?? '…'}
      </p>
      <h1 tabIndex={-1}>{member?.name ?? 'Test run'}</h1>
      {error && <Alert>{error}</Alert>}
      {member && <MemberBody setId={setId} member={member} />}
    </>
  );
}

function MemberBody({ setId, member }: { setId: string; member: Member }) {
  const artifacts = member.artifacts;
  const images = artifacts.filter((a) => a.contentType.startsWith('image/'));
  const files = artifacts.filter((a) => !a.contentType.startsWith('image/'));
  return (
    <>
      <p aria-live="polite">
        <StatusBadge status={member.status} />
        {member.flaky && <FlakyBadge />}
        <RestartedBadge member={member} />
        {member.skipped && <SkippedBadge />}
        {member.quarantined && <QuarantinedBadge />}
      </p>
      <dl class="facts">
        <dt>Type</dt>
        <dd>{member.type}</dd>
        <dt>Attempts</dt>
        <dd>{member.attempts}</dd>
        <dt>Starts</dt>
        <dd>
          {member.starts}
          {ranAgainText(member) !== null && <span class="muted"> — {ranAgainText(member)}</span>}
        </dd>
        <dt>Duration</dt>
        <dd>
          {formatDuration(member.durationMs)}
          {member.expectedMs !== null && <span class="muted"> (expected {formatDuration(member.expectedMs)})</span>}
        </dd>
        <dt>Worker</dt>
        <dd class="mono">{member.workerId ?? <span class="muted">—</span>}</dd>
        <dt>Started</dt>
        <dd><Time iso={member.startedAt} /></dd>
        <dt>Ended</dt>
        <dd><Time iso={member.endedAt} /></dd>
      </dl>
      {member.error && (
        <>
          <h2>Error</h2>
          <pre class="error-text">{member.error}</pre>
        </>
      )}
      {images.length > 0 && (
        <>
          <h2>Screenshots</h2>
          {images.map((a) => (
            <figure key={a.id} class="screenshot">
              <img src={artifactUrl(a)} alt={`Screenshot ${a.name} of ${member.name}`} loading="lazy" />
              <figcaption>
                <a href={artifactUrl(a)} download={a.name}>
                  {a.name}
                </a>{' '}
                <span class="muted">({formatBytes(a.size)})</span>
              </figcaption>
            </figure>
          ))}
        </>
      )}
      {files.length > 0 && <Files files={files} />}
      {member.cases.length > 0 && <CasesTable setId={setId} memberName={member.name} cases={member.cases} />}
      <h2>Output</h2>
      {member.output ? (
        <pre class="output" tabIndex={0} aria-label="Output of the test">
          {member.output}
        </pre>
      ) : (
        <p class="muted">{isFinal(member.status) ? 'No output.' : 'No output yet.'}</p>
      )}
    </>
  );
}

function Files({ files }: { files: Artifact[] }) {
  return (
    <>
      <h2>Files</h2>
      <ul class="files">
        {files.map((a) => (
          <li key={a.id}>
            {/* data-native: pages outside the dashboard's router, loaded by the browser itself.
                The file's name in the label tells a retry's trace from the first one's. */}
            {isTrace(a) ? (
              <a href={traceViewerUrl(a)} data-native aria-label={`Open trace ${a.name}`}>
                Open trace
              </a>
            ) : (
              isViewable(a) && (
                <a href={artifactUrl(a)} data-native aria-label={`Open ${a.name}`}>
                  {isErrorContext(a) ? 'Open error context' : `Open ${a.name}`}
                </a>
              )
            )}{' '}
            <a href={artifactUrl(a)} download={a.name}>
              {isTrace(a) ? `Download trace: ${a.name}` : `Download ${a.name}`}
            </a>{' '}
            <span class="muted">({formatBytes(a.size)})</span>
          </li>
        ))}
      </ul>
    </>
  );
}

/** Playwright's trace viewer as runset serves it; its service worker fetches the zip with the session cookie. */
function traceViewerUrl(artifact: Artifact): string {
  return `/trace-viewer/index.html?trace=${encodeURIComponent(artifactUrl(artifact))}`;
}

function isTrace(artifact: Artifact): boolean {
  return /^trace.*\.zip$/i.test(artifact.name) || artifact.contentType === 'application/zip';
}

/** Text the artifact route serves inline (under a sandboxing CSP), so the browser shows it rather than saving it. */
function isViewable(artifact: Artifact): boolean {
  return artifact.contentType.startsWith('text/');
}

function isErrorContext(artifact: Artifact): boolean {
  return /^error-context.*\.md$/.test(artifact.name);
}

/**
 * A set's labels (its CI context) on its page: the commit links to where the CI
 * said it can be seen (`commit_url`), and any http(s) value — the pipeline — is
 * a link; each label also filters the sets list.
 */
const HIDDEN = new Set(['commit_url']);

function isWebAddress(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

export function Labels({ labels }: { labels: Record<string, string> }) {
  const shown = Object.entries(labels).filter(([key]) => !HIDDEN.has(key));
  if (shown.length === 0) return null;
  const commitUrl = labels.commit_url !== undefined && isWebAddress(labels.commit_url) ? labels.commit_url : undefined;
  return (
    <>
      <dt>Labels</dt>
      <dd>
        <ul class="labels" aria-label="Labels">
          {shown.map(([key, value]) => {
            const href = key === 'commit' ? commitUrl : isWebAddress(value) ? value : undefined;
            return (
              <li key={key} data-label={key}>
                <a class="muted" href={`/?label=${encodeURIComponent(`${key}:${value}`)}`} title={`Sets labelled ${key}:${value}`}>
                  {key}
                </a>{' '}
                {href ? (
                  <a href={href} rel="noopener noreferrer" target="_blank" class="mono">
                    {key === 'commit' ? value.slice(0, 12) : value}
                  </a>
                ) : (
                  <span class="mono">{value}</span>
                )}
              </li>
            );
          })}
        </ul>
      </dd>
    </>
  );
}

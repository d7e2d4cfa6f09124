/**
 * The selection a set was created with (`select`, src/sets/select.ts), on its
 * page: one line per field given, so "only the smoke tests ran" is never a
 * surprise. Nothing when the set runs every test of its environment.
 */
import type { TestRunSetDetails } from '../../core/wire-dashboard.js';

type Selection = NonNullable<TestRunSetDetails['select']>;

const FIELDS: ReadonlyArray<{ key: keyof Selection; label: string }> = [
  { key: 'tags', label: 'tags (any of)' },
  { key: 'grep', label: 'name matches' },
  { key: 'grepInvert', label: 'name does not match' },
  { key: 'names', label: 'names' },
  { key: 'projects', label: 'projects' },
];

export function SelectionFacts({ select }: { select: TestRunSetDetails['select'] }) {
  if (!select) return null;
  const given = FIELDS.filter(({ key }) => select[key] !== undefined);
  if (given.length === 0) return null;
  return (
    <>
      <dt>Selection</dt>
      <dd>
        <ul class="labels" aria-label="Selection">
          {given.map(({ key, label }) => {
            const value = select[key];
            return (
              <li key={key} data-select={key}>
                <span class="muted">{label}</span> <span class="mono">{Array.isArray(value) ? value.join(', ') : value}</span>
              </li>
            );
          })}
        </ul>
      </dd>
    </>
  );
}

/**
 * Which tests a set runs: the server's own config, or an uploaded suite version
 * the create body names (`suite`: a version's id or a published name). A
 * version brings tests only: the environment, its variables, secrets and
 * outbound rule stay the server's, and the environment must opt in
 * (`allowSuiteUploads: true`). The version's tests were checked against this
 * server's environments, and its Playwright cases listed, when it was uploaded.
 */
import { echo, RunsetError } from '../core/errors.js';
import type { SuiteConfig } from '../config/suite.js';
import type { SuiteVersionsStore } from '../store/suite-versions.js';

export interface SetSource {
  /** What the set is planned from: the server's config, or the same with the version's tests. */
  suite: SuiteConfig;
  /** The version's id; null: the server's own tests. */
  version: string | null;
}

export async function setSource(config: SuiteConfig, body: { env: string; suite?: string }, suites: Pick<SuiteVersionsStore, 'resolve' | 'tests'>): Promise<SetSource> {
  if (body.suite === undefined) return { suite: config, version: null };
  const environment = config.environments.get(body.env);
  // An unknown environment is the plan's to refuse, with the list of known ones.
  if (!environment) return { suite: config, version: null };
  if (!environment.allowSuiteUploads) {
    throw new RunsetError(
      'suite_uploads_not_allowed',
      `environment "${body.env}" does not run uploaded suites; its sets run the server's own tests (leave out "suite"), or set allowSuiteUploads: true on it in the server's runset.config.yaml`,
    );
  }
  const version = await suites.resolve(body.suite);
  const tests = version === undefined ? undefined : await suites.tests(version);
  if (version === undefined || tests === undefined) {
    throw new RunsetError(
      'unknown_suite',
      `suite "${echo(body.suite)}" is neither a stored version's id nor a published name; upload it with \`runset suites push DIR --name NAME\` (or \`runset trigger --suite DIR\`), or list them with \`runset suites list\``,
    );
  }
  return { suite: Object.freeze({ ...config, tests }), version };
}

/**
 * The defaults of runset.config.yaml's optional keys, in one place: the loader
 * applies them (`raw.key ?? CONFIG_DEFAULTS.…`) and the loader's schemas carry
 * them as JSON Schema `default`, so the published schema
 * (schema/runset.config.schema.json), an editor's hover and
 * docs/reference/config.md show what an absent key means. A key whose absence
 * means "none" (maxFailures, maxConcurrentSets) or "the suite's own" (a
 * Playwright or framework test's timeout, retries and workers) has no entry;
 * a framework's own worker count is its adapter's `defaultWorkers`.
 */
import { DEFAULT_SET_TIMEOUT_SECONDS, setTimeoutText } from '../core/deadlines.js';
import type { SetEventName, WebhookFormat, WebhookWhen } from '../core/webhooks.js';

/** The check run's (GitHub) and commit status's (GitLab) name; `{env}` is the environment. */
const CODE_HOST_NAME = 'runset ({env})';

const WEBHOOK: { readonly events: readonly SetEventName[]; readonly format: WebhookFormat; readonly when: WebhookWhen } = Object.freeze({
  events: Object.freeze<SetEventName[]>(['set.finished']),
  format: 'json',
  when: 'always',
});

export const CONFIG_DEFAULTS = Object.freeze({
  environment: Object.freeze({
    failOnFlaky: false,
    /** The same deadline the API applies (src/core/deadlines.ts), as it is written in the file. */
    setTimeout: setTimeoutText(DEFAULT_SET_TIMEOUT_SECONDS),
    allowPrivateTargets: false,
    allowSuiteUploads: false,
  }),
  /** An http or command test's; a Playwright or framework test's unset ones are its suite's own. */
  test: Object.freeze({ timeoutSeconds: 120, retries: 0 }),
  http: Object.freeze({ method: 'GET' }),
  command: Object.freeze({ cwd: '.' }),
  webhook: WEBHOOK,
  github: Object.freeze({ apiUrl: 'https://api.github.com', checkName: CODE_HOST_NAME, pathPrefix: '' }),
  gitlab: Object.freeze({ apiUrl: 'https://gitlab.com/api/v4', statusName: CODE_HOST_NAME }),
});

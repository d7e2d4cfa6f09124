/**
 * `runset trigger --rerun-failed last`: which earlier set a CI re-run attempt
 * reruns — the newest ended set of the environment carrying this run's
 * `pipeline` label (src/client/ci-labels.ts).
 *
 * GitHub's pipeline label names the attempt (`…/actions/runs/42/attempts/3`
 * from the second attempt on), so the label of a re-run attempt is never the
 * one its first attempt's set carries. The earlier attempts' labels are
 * searched too, newest attempt first: attempt 3 looks at 3, 2, then the run's
 * own URL (attempt 1).
 */
import type { RunsetClient } from './client.js';
import { ciLabels } from './ci-labels.js';
import { EXIT_CODES, TriggerFailure, type TriggerEnv } from './trigger-context.js';

/** Sets read per label: a pipeline makes a handful, most of them ended. */
const PAGE = 100;

/** The id of the set `last` means; a TriggerFailure (exit 3) when there is no pipeline label or no such set. */
export async function lastEndedSetOfPipeline(client: RunsetClient, envName: string, env: TriggerEnv, signal?: AbortSignal): Promise<string> {
  const pipeline = ciLabels(env).pipeline;
  if (pipeline === undefined) {
    throw new TriggerFailure(EXIT_CODES.error, '--rerun-failed last needs the CI\'s pipeline label (GitHub Actions, GitLab CI, Buildkite, CircleCI or Jenkins variables), and none was found; pass the set\'s id instead');
  }
  const labels = pipelineLabels(pipeline);
  for (const label of labels) {
    const sets = await client.listTestRunSets({ env: envName, labels: { pipeline: label }, limit: PAGE }, { signal });
    const ended = sets.find((set) => set.status === 'SUCCESS' || set.status === 'FAIL');
    if (ended) return ended.id;
  }
  throw new TriggerFailure(EXIT_CODES.error, `--rerun-failed last: no ended set of environment "${envName}" carries the label pipeline:${labels.join(' or pipeline:')}; nothing to rerun`);
}

/** This run's pipeline label and its earlier attempts' (GitHub's `/attempts/N`), newest first. */
export function pipelineLabels(pipeline: string): string[] {
  const attempt = /^(.*)\/attempts\/(\d+)$/.exec(pipeline);
  if (!attempt) return [pipeline];
  const [, run = '', number = '1'] = attempt;
  const earlier = Array.from({ length: Math.max(0, Number(number) - 2) }, (_, i) => `${run}/attempts/${Number(number) - 1 - i}`);
  return [pipeline, ...earlier, run];
}

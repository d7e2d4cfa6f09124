/**
 * The framework test types (`type: vitest`, `type: jest`, …): a folder whose
 * suite the framework runs. At load an entry is checked and kept as one entry;
 * discovery (./framework-discovery.ts) then lists its cases with the framework
 * itself, and each case becomes one member of the sets that include it. One
 * definition serves every framework: they differ only in their adapter
 * (src/executors/frameworks/).
 */
import path from 'node:path';
import type { Static, TObject } from 'typebox';
import { Type } from '../core/typebox.js';
import type { FrameworkName, FrameworkTestSpec, TestSpec } from '../core/types.js';
import { FRAMEWORK_ADAPTERS } from '../executors/frameworks/registry.js';
import { fail } from './suite-error.js';
import { DISK_FILES, resolveTestPath, type TestTypeDefinition } from './test-type.js';
import { ArtifactGlobsProperty, artifactGlobs } from './artifact-globs.js';

const FrameworkProperties = {
  dir: Type.String({ minLength: 1, description: "the suite's folder (where the framework is run, its node_modules in it or above it), relative to the config file's folder" }),
  args: Type.Optional(
    Type.Array(Type.String({ description: 'an argument string' }), {
      description: 'extra arguments for the framework, given to its listing and its runs, such as [--config, vitest.e2e.config.ts]',
    }),
  ),
  artifacts: ArtifactGlobsProperty,
};

/** `workers`, whose default is the adapter's own count where it has one (else the framework's). */
function workersProperty(defaultWorkers: number | undefined) {
  return Type.Optional(
    Type.Integer({ minimum: 1, maximum: 64, ...(defaultWorkers === undefined ? {} : { default: defaultWorkers }), description: 'a whole number of framework workers from 1 to 64' }),
  );
}

type FrameworkRaw = Static<TObject<typeof FrameworkProperties>> & { workers?: number; python?: string; collection?: string };

export function frameworkTestType<F extends FrameworkName>(type: F): TestTypeDefinition<Extract<TestSpec, { type: F }>> {
  const adapter = FRAMEWORK_ADAPTERS[type];
  return {
    properties: { dir: FrameworkProperties.dir, args: FrameworkProperties.args, workers: workersProperty(adapter.defaultWorkers), artifacts: FrameworkProperties.artifacts, ...adapter.properties },
    suiteOwnsTimings: true,
    build(raw, common, ctx) {
      const { dir, args, workers, python, collection, artifacts } = raw as FrameworkRaw; // validated by the caller
      const at = [...ctx.path, 'dir'];
      const folder = resolveTestPath(ctx, at, dir);
      if (!(ctx.files ?? DISK_FILES).isFolder(folder)) fail(at, `${JSON.stringify(dir)} is not a folder (${folder})`, `the folder of a ${adapter.title} suite`);
      if (raw.retries !== undefined && !adapter.retriesFlag) {
        fail([...ctx.path, 'retries'], `${adapter.title} takes no retries from its command line`, adapter.retriesHint ?? `no "retries" here: set them in the suite itself (${type === 'jest' ? 'jest.retryTimes(n)' : 'its own config'})`);
      }
      const { name, ...rest } = common;
      // Unset timeout and retries are the suite's own: the framework applies them.
      const spec: FrameworkTestSpec = {
        name,
        type,
        dir: folder,
        args: [...(args ?? [])],
        ...rest,
        timeoutOverride: raw.timeoutSeconds !== undefined,
        retriesOverride: raw.retries !== undefined,
      };
      const framework = workers ?? adapter.defaultWorkers;
      if (framework !== undefined) spec.workers = framework;
      if (python !== undefined) spec.python = python;
      const globs = artifactGlobs(artifacts, [...ctx.path, 'artifacts'], "the suite's folder (dir)");
      if (globs) spec.artifacts = globs;
      if (collection !== undefined) {
        const file = resolveTestPath(ctx, [...ctx.path, 'collection'], path.join(dir, collection));
        if (!(ctx.files ?? DISK_FILES).isFile(file)) fail([...ctx.path, 'collection'], `${JSON.stringify(collection)} is not a file (${file})`, `a Postman collection file, relative to "dir"`);
        spec.collection = collection;
      }
      return spec as Extract<TestSpec, { type: F }>;
    },
  };
}

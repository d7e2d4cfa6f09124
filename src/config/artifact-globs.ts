/**
 * `artifacts:` on a test entry (a framework suite, a command): files or globs
 * the test writes, relative to its folder, kept as its artifacts
 * (src/executors/artifact-files.ts). One schema and one check for every type
 * that takes it.
 */
import { Type } from '../core/typebox.js';
import type { DocPath } from './suite-error.js';
import { checkInsideGlob } from './test-type.js';

export const ArtifactGlobsProperty = Type.Optional(
  Type.Array(Type.String({ minLength: 1, description: 'a file or glob relative to the test\'s folder, such as "screenshots/**/*.png"' }), {
    minItems: 1,
    description: 'files the test writes that are kept as its artifacts, such as ["screenshots/**/*.png"]',
  }),
);

/** The entry's globs, each checked to stay inside `folder` (named as the user knows it, such as "the suite's folder (dir)"); undefined when it has none. */
export function artifactGlobs(given: readonly string[] | undefined, at: DocPath, folder: string): string[] | undefined {
  if (given === undefined) return undefined;
  given.forEach((glob, i) => checkInsideGlob([...at, i], glob, folder, 'screenshots/**/*.png'));
  return [...given];
}

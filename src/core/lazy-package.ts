/**
 * A CommonJS package loaded when first used rather than when its importer is:
 * a package that most processes never call (undici's own fetch, xmlbuilder2)
 * then costs their start nothing. Each such package took 90–120 ms of CPU to
 * load, on every `runset serve` start (bench/README.md, "runset's start").
 * require() keeps one instance, so a later static import gets the same one.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package `name` as a function that loads it on its first call. */
export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}

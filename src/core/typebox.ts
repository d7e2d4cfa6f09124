/**
 * The one door to TypeBox's runtime: the schema builder (`Type`), its
 * compiler (`Compile`) and its value functions (`Value`). Every runtime use
 * imports them from here, never from the `typebox` packages themselves (an
 * ESLint rule says so; type-only imports of `typebox` are free).
 *
 * Why a door: TypeBox ships as some 700 small ES modules, and loading them cost
 * each `runset serve`, `worker` and `trigger` about half a second of CPU at
 * start. `npm run build` replaces this file's compiled output with one bundle
 * of the same exports (./door-bundles.ts), which loads in a few milliseconds.
 * Without that step (a bare `tsc`) this file works as it is, only slower: one
 * TypeBox either way, so schemas built by `Type` are the ones `Compile` knows.
 */
export { Type } from 'typebox';
export { Compile } from 'typebox/compile';
export { Value } from 'typebox/value';

/**
 * A process's start as a list of steps, each with the teardown that undoes it
 * (Playwright's taskRunner is the model): setups run in order; stop tears down
 * the steps that were set up, in reverse; a setup that fails tears down those
 * before it and fails the start. A role (src/roles/api.ts, src/roles/worker.ts)
 * is a list of steps, so what a process runs is the steps its options choose,
 * not a function of `if`s.
 */

export interface Step {
  /** What it sets up, for whoever reads the list. */
  name: string;
  setup(): void | Promise<void>;
  /** Undoes setup; absent: nothing to undo (or a later step's teardown undoes it). */
  teardown?(): void | Promise<void>;
}

/**
 * Steps, and functions that stand for steps needing what the steps before
 * them set up (a role built on the store once it is open): such a function is
 * called when the run reaches it, and its steps run there. It may load its
 * role's modules first (a promise), so a process loads only the roles it runs.
 */
export type Steps = ReadonlyArray<Step | (() => readonly Step[] | Promise<readonly Step[]>)>;

/** Runs the steps' setups in order; answers the teardown of every step set up, which runs once however often it is called. */
export async function setUp(steps: Steps): Promise<() => Promise<void>> {
  const done: Step[] = [];
  let tearing: Promise<void> | undefined;
  const tearDown = () =>
    (tearing ??= (async () => {
      for (const step of done.reverse()) await step.teardown?.();
    })());
  try {
    for (const entry of steps) {
      for (const step of typeof entry === 'function' ? await entry() : [entry]) {
        await step.setup();
        done.push(step);
      }
    }
  } catch (err) {
    await tearDown();
    throw err;
  }
  return tearDown;
}

/** A periodic sweep as a step: `start` starts it and answers its stop. */
export function sweep(name: string, start: () => (() => Promise<void>) | Promise<() => Promise<void>>): Step {
  let stop: (() => Promise<void>) | undefined;
  return {
    name,
    setup: async () => {
      stop = await start();
    },
    teardown: () => stop?.(),
  };
}

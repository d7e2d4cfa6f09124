/**
 * The pool's side of a suite's `webServer` on a fixed port (see ./host-lock.ts):
 * a batch takes the host's locks on those ports before its Playwright process
 * starts and holds them until the batch ends. A batch that finds one held gives
 * its members back (so no claimed member waits idle here, and another host may
 * run them) and its batch key is left out of this worker's claims until the
 * lock frees; otherwise the longest-first claim would hand the same member
 * straight back, again and again.
 *
 * Worker processes of one host cannot pool their slots for such a batch (a
 * running Playwright process takes no tests from outside), so the first
 * worker process of a host holds a mark there and a second one says at start
 * to give one process more slots instead.
 */
import type { Logger } from 'pino';
import type { ClaimedRun, TestSpec } from '../core/types.js';
import { lockPorts, markWorkerProcess, whenFree, type HeldLock } from './host-lock.js';

const NO_LOCK: HeldLock = Object.freeze({ release: () => undefined });

/**
 * Said by a worker process that starts where another runs: it cannot help the
 * other with a fixed-port webServer suite (one Playwright process per host at a
 * time), so it leaves such batches to whichever process holds the port.
 */
export const SECOND_PROCESS_ADVICE =
  'another runset worker process runs on this host: a Playwright suite with a webServer on a fixed port runs one Playwright process per host at a time, so this process leaves such a batch to the process that holds the port and never adds its slots to it; to run such a suite on more slots, give one worker process --workers N (and the entry workers: N) instead';

/** The fixed ports a spec's suite starts its webServer on (recorded when the suite was listed). */
export function webServerPorts(spec: TestSpec): readonly number[] {
  return spec.type === 'playwright' ? (spec.case?.webServerPorts ?? []) : [];
}

export class WebServerGate {
  private readonly blocked = new Set<string>();
  private mark: HeldLock | undefined;

  /** `wake`: a lock this worker waited for is free; claim again. */
  constructor(
    private readonly wake: () => void,
    private readonly logger: Logger,
  ) {}

  /** At the pool's start: marks this process as the host's first worker process, or says why a second one does not help a fixed-port suite. */
  async start(): Promise<void> {
    try {
      this.mark = await markWorkerProcess();
    } catch (err) {
      this.logger.debug({ err }, 'cannot mark this worker process on its host (no abstract sockets)');
      return;
    }
    if (!this.mark) this.logger.warn(SECOND_PROCESS_ADVICE);
  }

  stop(): void {
    this.mark?.release();
    this.mark = undefined;
  }

  /** Batch keys this worker must not claim now (ClaimRequest.skipBatchKeys). */
  get skipped(): string[] | undefined {
    return this.blocked.size === 0 ? undefined : [...this.blocked];
  }

  /** The host's locks for the batch of `head`, or undefined when another batch on this host holds one: give the batch back. */
  async enter(head: ClaimedRun): Promise<HeldLock | undefined> {
    const ports = webServerPorts(head.spec);
    if (ports.length === 0 || head.batchKey === null) return NO_LOCK;
    let got: Awaited<ReturnType<typeof lockPorts>>;
    try {
      got = await lockPorts(ports);
    } catch (err) {
      // Not Linux, say: run as before rather than not at all, and say so.
      this.logger.warn({ err, ports }, 'cannot take the host lock of a webServer port; running the batch without it');
      return NO_LOCK;
    }
    if ('held' in got) return got.held;
    const key = head.batchKey;
    if (!this.blocked.has(key)) {
      this.blocked.add(key);
      this.logger.info({ port: got.busy, batchKey: key }, 'a batch of this suite already runs its webServer on this host; waiting for it to end');
      void whenFree(got.busy).then(() => {
        this.blocked.delete(key);
        this.wake();
      });
    }
    return undefined;
  }
}

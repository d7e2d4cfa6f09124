/**
 * Host-wide locks on TCP ports: a batch of a suite whose `webServer` listens on
 * a fixed port holds that port's lock while its Playwright process runs, so two
 * batches on one host never start two copies of the server on one port (one
 * fails with EADDRINUSE, or, with `reuseExistingServer`, borrows the other's
 * server and loses it when that batch ends).
 *
 * A lock is a listening Unix socket in Linux's abstract namespace, named after
 * the port, rather than a lock file: the kernel frees it the moment its process
 * ends, however it ends, so there is no stale owner to detect; and an abstract
 * socket belongs to a network namespace, which is exactly where two servers on
 * one port collide (containers with networks of their own neither collide nor
 * block each other). Slots of one process and worker processes of one host meet
 * on the same lock.
 *
 * Waiting without polling: a waiter connects to the holder's socket; the holder
 * drops its connections when it releases, and the kernel does if it dies, so
 * the waiter hears the connection close.
 */
import net from 'node:net';

export interface HeldLock {
  release(): void;
}

function lockName(port: number): string {
  return `\0runset-webserver-port-${port}`;
}

/** The mark of the first runset worker process of a host (see markWorkerProcess). */
const WORKER_MARK = '\0runset-worker-process';

/** Holds one port's lock; undefined when another holder has it. */
function lockOne(port: number): Promise<HeldLock | undefined> {
  return holdName(lockName(port));
}

/**
 * Held while this worker process runs, when it is the first of its host (its
 * network namespace, as the port locks): undefined when another worker
 * process of the host holds it.
 */
export function markWorkerProcess(): Promise<HeldLock | undefined> {
  return holdName(WORKER_MARK);
}

function holdName(name: string): Promise<HeldLock | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    const waiters = new Set<net.Socket>();
    server.on('connection', (socket) => {
      socket.unref();
      waiters.add(socket);
      socket.on('close', () => waiters.delete(socket));
      socket.on('error', () => undefined); // a waiter that went away: nothing to tell it
    });
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)));
    server.listen(name, () => {
      server.unref(); // a held lock never keeps the process alive by itself
      resolve({
        release: () => {
          server.close();
          for (const socket of waiters) socket.destroy();
        },
      });
    });
  });
}

/**
 * Takes the locks of every port (in ascending order, so two takers of
 * overlapping ports cannot each hold one the other waits for), or none: `busy`
 * names a port someone else holds.
 */
export async function lockPorts(ports: readonly number[]): Promise<{ held: HeldLock } | { busy: number }> {
  const taken: HeldLock[] = [];
  for (const port of [...new Set(ports)].sort((a, b) => a - b)) {
    let lock: HeldLock | undefined;
    try {
      lock = await lockOne(port);
    } catch (err) {
      for (const t of taken) t.release();
      throw err;
    }
    if (lock === undefined) {
      for (const t of taken) t.release();
      return { busy: port };
    }
    taken.push(lock);
  }
  return { held: { release: () => taken.forEach((t) => t.release()) } };
}

/** Resolves once the port's lock is (probably) free: its holder released it or died. At once if nobody holds it. */
export function whenFree(port: number): Promise<void> {
  return new Promise((resolve) => {
    let connected = false;
    const socket = net.connect(lockName(port));
    socket.unref(); // waiting never keeps the process alive
    socket.on('connect', () => (connected = true));
    socket.on('error', () => undefined); // refused: nobody holds it ('close' follows)
    // A holder that dies may close our connection a moment before its listening
    // socket: free means refused, so a closed connection is asked again.
    socket.on('close', () => resolve(connected ? whenFree(port) : undefined));
  });
}

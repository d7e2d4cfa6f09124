/**
 * The command launcher's process (see ./launcher.ts): runs `runCommand` for the
 * worker that forked it, one message in and one out per command, and ends with
 * that worker — killing what it still runs — when the IPC channel closes.
 */
import type { LauncherReply, LauncherRequest, WireReason } from './launcher.js';
import { runCommand } from './index.js';

const running = new Map<number, AbortController>();
/** This process's environment, read once: it is the worker's, already scrubbed, and nothing here changes it. */
const ENVIRONMENT: NodeJS.ProcessEnv = { ...process.env };

function revive(reason: WireReason): unknown {
  if (reason === null || typeof reason === 'string') return reason ?? undefined;
  const err = new Error(reason.message);
  err.name = reason.name;
  return err;
}

function reply(message: LauncherReply): void {
  if (process.connected) process.send?.(message);
}

process.on('message', (message: LauncherRequest) => {
  if (message.type === 'abort') {
    running.get(message.id)?.abort(revive(message.reason));
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  // The launcher's own environment is already scrubbed: only the user to run as and the containment come with the message.
  void runCommand(message.spec, { variables: message.variables, signal: controller.signal }, { runAs: message.runAs, containment: message.containment }, ENVIRONMENT).then((result) => {
    running.delete(message.id);
    reply({ type: 'done', id: message.id, result });
  });
});

process.on('disconnect', () => {
  // The worker is gone (stopped, or killed outright): its commands go with it.
  for (const controller of running.values()) controller.abort('the worker stopped');
  process.exit(0);
});

// A terminal's Ctrl-C or a group-wide SIGTERM is the worker's to handle: a graceful
// stop lets running commands finish, so the launcher stays until the worker exits.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

reply({ type: 'ready' });

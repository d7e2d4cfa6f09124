/**
 * Fastify gives every request a child logger bound to its id. Making a pino
 * child serialises its bindings at once, which cost the status GET more than
 * its own work (bench:status), while requests rarely log at all (request
 * logging is off; errors and set creation log). This child binds on first use.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { LevelWithSilent } from 'pino';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

class LazyChildLogger {
  private bound: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.bound ??= this.parent.child(this.bindings));
  }

  get level(): string {
    return (this.bound ?? this.parent).level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  private log(level: Exclude<LevelWithSilent, 'silent'>, args: unknown[]): void {
    const real = this.real;
    Reflect.apply(real[level], real, args);
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(): void {
    // Logs nothing: no child to bind for it.
  }
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, bound to its id when it first logs. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  // A route with its own level or serializers gets a real child at once.
  if (options && !isEmpty(options)) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings);
}

/** Whether an object has no own enumerable key, without making their list (called per request). */
function isEmpty(object: object): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return false;
  return true;
}

/**
 * Where runset's own requests (http tests, webhooks) may go: never to
 * link-local or cloud metadata addresses, and to private ranges only when the
 * environment says so. Otherwise an override of BASE_URL could aim a check at
 * http://169.254.169.254/… and the member's output would hand back the
 * machine's cloud credentials (a server-side request forgery).
 *
 * The check sits in the connection itself (an undici dispatcher): the host of
 * every connection is checked, and a host name after DNS resolution against
 * every address it resolves to. Redirects open their connections through the
 * same dispatcher, so they are checked too; a name that resolves to a
 * harmless address for the check and a metadata one for the connection
 * cannot happen, as the connection uses the very addresses checked.
 *
 * Policy (what is refused, and why) is pure and apart: refusalFor(); the
 * mechanism is outboundDispatcher().
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOneOptions, LookupAllOptions } from 'node:dns';
import type * as Undici from 'undici';
import { lazyPackage } from '../core/lazy-package.js';
import type { OutboundPolicy } from '../core/types.js';
import { classifyAddress, isMetadataHostName, type AddressKind } from './addresses.js';

export { classifyAddress, isMetadataHostName, METADATA_ADDRESSES, METADATA_HOST_NAMES, type AddressKind } from './addresses.js';
export type { OutboundPolicy } from '../core/types.js';

/** undici, loaded by the first process that sends a request of its own (an http test, a webhook). */
export const undici = lazyPackage<typeof Undici>('undici');

/** Link-local and metadata refused, private refused, loopback allowed: what an environment gets unless it opts in. */
export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = Object.freeze({ allowPrivateTargets: false });

const NEVER = 'runset never sends requests there';

/** Why a connection to an address of this kind is refused under `policy`, or null when it is allowed. */
export function refusalFor(kind: AddressKind, policy: OutboundPolicy): string | null {
  switch (kind) {
    case 'metadata':
      return `a cloud metadata address; ${NEVER}`;
    case 'link-local':
      return `a link-local address (169.254.0.0/16, fe80::/10), where cloud metadata services answer; ${NEVER}`;
    case 'not-unicast':
      return 'a multicast or broadcast address, which no HTTP server answers on';
    case 'private':
      return policy.allowPrivateTargets
        ? null
        : 'a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7); ' +
            'runset reaches private addresses only for an environment with allowPrivateTargets: true';
    case 'public':
    case 'loopback':
    case 'unspecified':
      return null;
  }
}

/** A connection runset will not open. Its message says what was refused and why; `code` is stable. */
export class OutboundRefused extends Error {
  readonly code = 'ERR_RUNSET_OUTBOUND_REFUSED';
  constructor(
    /** The host name or address that was refused. */
    readonly target: string,
    message: string,
  ) {
    super(`refused: ${message}`);
    this.name = 'OutboundRefused';
  }
}

/** The OutboundRefused behind an error (fetch wraps connection errors in `cause`), if any. */
export function outboundRefusalIn(error: unknown): OutboundRefused | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof OutboundRefused) return current;
  }
  return null;
}

/**
 * The check of one connection's host, before any DNS: a metadata DNS name, or
 * an address literal of a refused kind, is refused. A host name otherwise
 * passes here and is checked again against what it resolves to.
 */
export function checkHost(host: string, policy: OutboundPolicy): OutboundRefused | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isMetadataHostName(bare)) return new OutboundRefused(bare, `${bare} is a cloud metadata host name; ${NEVER}`);
  const kind = classifyAddress(bare);
  const reason = kind === null ? null : refusalFor(kind, policy);
  return reason === null ? null : new OutboundRefused(bare, `${bare} is ${reason}`);
}

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Resolves a host name to every address it has (the system resolver by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, order: 'verbatim' });

/** Every address `hostname` resolves to, once each of them passed the policy; refused if any one does not. */
export async function resolveChecked(hostname: string, policy: OutboundPolicy, resolve: Resolver): Promise<ResolvedAddress[]> {
  const named = checkHost(hostname, policy);
  if (named) throw named;
  const addresses = [...(await resolve(hostname))];
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    const reason = kind === null ? `not an IP address (${JSON.stringify(address)})` : refusalFor(kind, policy);
    if (reason !== null) throw new OutboundRefused(hostname, `${hostname} resolves to ${address}, ${reason}`);
  }
  if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  return addresses;
}

export interface OutboundOptions {
  /** Name resolution; the system resolver by default. */
  resolve?: Resolver;
  /** Connection timeout (undici's default: 10 s). */
  connectTimeoutMs?: number;
}

/**
 * An undici dispatcher whose every connection obeys `policy`: pass it as
 * `dispatcher` to undici's fetch or request. Refused connections fail with an
 * OutboundRefused (under fetch's "fetch failed", as its `cause`).
 */
export function outboundDispatcher(policy: OutboundPolicy, options: OutboundOptions = {}): Undici.Dispatcher {
  const resolve = options.resolve ?? systemResolver;
  type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;
  // net.connect calls this for host names only; address literals are checked in connect() below.
  const lookup = (hostname: string, lookupOptions: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolveChecked(hostname, policy, resolve).then(
      (addresses) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((entry) => entry.family === family);
        const first = usable[0];
        if (lookupOptions.all) callback(null, usable);
        else if (first) callback(null, first.address, first.family);
        else callback(Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      },
      (error: Error) => callback(error, '', 0),
    );
  };
  const { Agent, buildConnector } = undici();
  const connector = buildConnector({ lookup, timeout: options.connectTimeoutMs ?? null } as Undici.buildConnector.BuildOptions);
  return new Agent({
    connect(connectOptions, callback) {
      const refused = checkHost(connectOptions.hostname, policy);
      if (refused) {
        callback(refused, null);
        return;
      }
      connector(connectOptions, callback);
    },
  });
}

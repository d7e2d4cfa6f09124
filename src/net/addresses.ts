/**
 * What kind of place an address is: the pure half of the outbound rules
 * (outbound.ts holds the other half, the connection check). No I/O here.
 *
 * Every spelling a URL parser or a resolver may hand over is understood:
 * dotted, decimal (2852039166), octal (0251.0376.0251.0376), hex (0xa9fea9fe)
 * and short (169.254.43518) IPv4, bracketed IPv6 with a zone, and IPv6 forms
 * that carry an IPv4 address inside (::ffff:a9fe:a9fe, NAT64 64:ff9b::/96,
 * IPv4-compatible ::/96, 6to4 2002::/16), which are judged by that address:
 * a packet to them ends up there.
 */
import ipaddr from 'ipaddr.js';

export type AddressKind =
  /** Anywhere on the internet. */
  | 'public'
  /** 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT), fc00::/7 (unique local). */
  | 'private'
  /** 127/8, ::1: the machine itself. */
  | 'loopback'
  /** 0.0.0.0/8, ::: on Linux a connection to it reaches the machine itself. */
  | 'unspecified'
  /** 169.254/16, fe80::/10: where cloud metadata services live. */
  | 'link-local'
  /** A cloud provider's instance metadata or platform endpoint (see METADATA_ADDRESSES). */
  | 'metadata'
  /** Multicast and broadcast: nothing an HTTP check can talk to. */
  | 'not-unicast';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Instance metadata and platform endpoints: they hand out credentials to
 * whoever asks from the machine, so no request of runset ever goes there.
 * Most are link-local anyway; the others are listed because their range
 * (private, or even public) would not refuse them.
 */
export const METADATA_ADDRESSES: ReadonlyMap<string, string> = new Map([
  ['169.254.169.254', 'AWS, Google Cloud, Azure, Oracle Cloud, DigitalOcean, Hetzner, OpenStack'],
  ['169.254.170.2', 'AWS ECS task metadata'],
  ['169.254.170.23', 'AWS EKS Pod Identity'],
  ['169.254.0.23', 'Tencent Cloud'],
  ['100.100.100.200', 'Alibaba Cloud'],
  ['192.0.0.192', 'Oracle Cloud Classic'],
  ['168.63.129.16', 'Azure WireServer'],
  ['fd00:ec2::254', 'AWS instance metadata over IPv6'],
  ['fd00:ec2::23', 'AWS EKS Pod Identity over IPv6'],
  ['fd20:ce::254', 'Google Cloud metadata over IPv6'],
].map(([address, owner]) => [canonical(ipaddr.parse(address as string)), owner as string]));

/** DNS names of metadata services (they resolve to the addresses above, or only inside the cloud's own resolver). */
export const METADATA_HOST_NAMES: ReadonlySet<string> = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
]);

/** The address in `text` (any spelling above, brackets and zone allowed), or null when it is not an IP address. */
export function parseAddress(text: string): Address | null {
  let host = text.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (!ipaddr.isValid(host)) return null;
  try {
    return ipaddr.parse(host);
  } catch {
    return null;
  }
}

/** The kind of the address in `text`, or null when `text` is not an IP address (a host name). */
export function classifyAddress(text: string): AddressKind | null {
  const address = parseAddress(text);
  return address === null ? null : kindOf(address);
}

/** True for a metadata service's DNS name, in any case, with or without the final dot. */
export function isMetadataHostName(name: string): boolean {
  return METADATA_HOST_NAMES.has(name.trim().toLowerCase().replace(/\.+$/, ''));
}

function kindOf(address: Address): AddressKind {
  const inner = embeddedIPv4(address);
  if (inner) return kindOf(inner);
  if (METADATA_ADDRESSES.has(canonical(address))) return 'metadata';
  switch (address.range()) {
    case 'linkLocal':
      return 'link-local';
    case 'loopback':
      return 'loopback';
    case 'unspecified':
      return 'unspecified';
    case 'private':
    case 'carrierGradeNat':
    case 'uniqueLocal':
      return 'private';
    case 'multicast':
    case 'broadcast':
      return 'not-unicast';
    default:
      return 'public';
  }
}

/** The IPv4 address an IPv6 address stands for, if it is one of the forms that carry one. */
function embeddedIPv4(address: Address): ipaddr.IPv4 | null {
  if (address.kind() !== 'ipv6') return null;
  const parts = (address as ipaddr.IPv6).parts;
  const low = (): ipaddr.IPv4 => fromWords(parts[6] as number, parts[7] as number);
  const zeros = (from: number, to: number): boolean => parts.slice(from, to).every((part) => part === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (SIIT, RFC 6145)
  if (zeros(0, 5) && parts[5] === 0xffff) return low();
  if (zeros(0, 4) && parts[4] === 0xffff && parts[5] === 0) return low();
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix) and 64:ff9b:1::/48 (local-use NAT64, RFC 8215)
  if (parts[0] === 0x64 && parts[1] === 0xff9b && (zeros(2, 6) || parts[2] === 1)) return low();
  // ::a.b.c.d (IPv4-compatible, deprecated but still parsed), except :: and ::1
  if (zeros(0, 6) && (parts[6] as number) !== 0) return low();
  // 2002:AABB:CCDD::/48 (6to4): the relay delivers to AA.BB.CC.DD
  if (parts[0] === 0x2002) return fromWords(parts[1] as number, parts[2] as number);
  return null;
}

function fromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function canonical(address: Address): string {
  return address.kind() === 'ipv6' ? (address as ipaddr.IPv6).toNormalizedString().replace(/%.*$/, '') : address.toString();
}

/**
 * The webhook signature, as Stripe signs its webhooks so existing verification
 * code fits: `Runset-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * The timestamp is signed with the body, so a receiver that checks it is
 * recent also refuses a replayed delivery.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'runset-signature';
/** How old a signature a receiver should accept, by default (seconds). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function mac(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${mac(secret, timestamp, body)}`;
}

/**
 * Whether `header` signs `body` with `secret` at a time within `toleranceSeconds`
 * of `nowSeconds`: what a receiver runs (docs/guides/integrations.md shows the same in a few lines).
 */
export function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  { nowSeconds = Math.floor(Date.now() / 1000), toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = {},
): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(mac(secret, timestamp, body), 'hex');
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The store's part of webhooks: an outbox. The store itself writes a set event
 * (a database trigger) in the transaction that starts or ends a set, so an event
 * exists exactly when its change does, whatever process made it. Delivering
 * processes then fan events out into deliveries and lease those one at a time:
 * each event and each attempt is taken by exactly one process.
 */
import type { AttemptOutcome, DeliveryWithAttempts, DueDelivery, SetEvent } from '../core/webhooks.js';

export interface WebhookOutbox {
  /**
   * Takes up to `limit` set events, oldest first, and turns each into one
   * delivery per webhook `route` names for it (none: the event is dropped), in
   * one transaction. Returns how many events were taken (0: none pending).
   */
  fanOut(route: (event: SetEvent) => readonly string[], limit: number): Promise<number>;
  /** Leases to the caller, for `leaseMs`, up to `limit` pending deliveries whose next attempt is due, oldest due first. */
  claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]>;
  /**
   * Records an attempt of a leased delivery (fenced by its lease token) and
   * what follows: delivered, retried after `retryInMs`, or given up. False
   * when the lease was lost (the record is not written).
   */
  recordAttempt(delivery: Pick<DueDelivery, 'id' | 'leaseToken'>, outcome: AttemptOutcome): Promise<boolean>;
  /** How many of a set's events are not yet fanned out: while any are, more of its deliveries are to come. */
  eventsWaiting(setId: string): Promise<number>;
  /** A set's deliveries, oldest first, each with its attempts. */
  listDeliveries(setId: string): Promise<DeliveryWithAttempts[]>;
}

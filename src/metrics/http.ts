/**
 * API requests, for the metrics: one onResponse hook, installed only when
 * metrics are on (buildApp's `onResponse`). Labelled by the route template
 * (`/api/v0/test-run-sets/:id`), never the raw URL, so the series stay few.
 */
import type { onResponseHookHandler } from 'fastify';
import type { RunsetMetrics } from './registry.js';

/** Requests that matched no route: one series for all of them. */
const UNMATCHED = 'unmatched';

export function httpMetricsHook(metrics: RunsetMetrics): onResponseHookHandler {
  // A callback hook, not an async one: no promise per request on the status GET's path.
  return (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? UNMATCHED, status_code: reply.statusCode };
    metrics.httpRequests.observe(labels, reply.elapsedTime / 1000);
    done();
  };
}

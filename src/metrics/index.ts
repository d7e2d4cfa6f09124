/**
 * Metrics for one process, as main.ts wires them when --metrics-port is set:
 * the registry, the store seen through the metrics, the API's request hook, and
 * the listener that serves scrapes. Imported only then (see main.ts).
 */
import type { onResponseHookHandler } from 'fastify';
import type { Store } from '../store/store.js';
import { RunsetMetrics } from './registry.js';
import { instrumentStore } from './store.js';
import { httpMetricsHook } from './http.js';
import { listenForScrapes, type MetricsListener } from './server.js';

export interface ProcessMetrics {
  metrics: RunsetMetrics;
  /** The store to hand every part of the process instead of the one opened. */
  store: Store;
  /** For buildApp's `onResponse`. */
  onResponse: onResponseHookHandler;
  listen(at: { host: string; port: number }): Promise<MetricsListener>;
}

/** `workerStaleMs`: how long a worker may stay silent and still count as live (src/scheduler/registration.ts). */
export function observeProcess(opened: Store, workerStaleMs: number): ProcessMetrics {
  const metrics = new RunsetMetrics();
  const store = instrumentStore(opened, metrics);
  metrics.watchStore(store, workerStaleMs);
  return { metrics, store, onResponse: httpMetricsHook(metrics), listen: (at) => listenForScrapes(metrics, at) };
}

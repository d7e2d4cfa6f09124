/**
 * The metrics listener: GET /metrics on its own port (--metrics-port), apart
 * from the API, so an API open to CI does not show its metrics. Anything else
 * there answers 404.
 */
import { Fastify } from '../core/fastify.js';
import { urlHost } from '../config/options.js';
import type { RunsetMetrics } from './registry.js';

export interface MetricsListener {
  /** Where to scrape, e.g. http://127.0.0.1:9464/metrics */
  url: string;
  close(): Promise<void>;
}

export async function listenForScrapes(metrics: RunsetMetrics, at: { host: string; port: number }): Promise<MetricsListener> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
  await app.listen({ host: at.host, port: at.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : at.port;
  return { url: `http://${urlHost(at.host)}:${port}/metrics`, close: () => app.close() };
}

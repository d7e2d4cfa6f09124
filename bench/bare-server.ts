/**
 * The baseline for bench/status.ts: a bare Fastify route returning the same
 * JSON as runset's status GET, with no auth and no store. Prints its URL.
 */
import Fastify from 'fastify';

const body = JSON.parse(process.argv[2] ?? '{}') as unknown;
const app = Fastify({ logger: false });
app.get('/status', () => body);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`READY http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/status\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

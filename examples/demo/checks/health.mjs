// A `command` test: any program that exits 0 passes. Variables arrive as environment.
const base = process.env.BASE_URL;
if (!base) {
  console.error('BASE_URL is not set');
  process.exit(2);
}
const res = await fetch(`${base}/api/health`);
const body = await res.json().catch(() => ({}));
console.log(`GET ${base}/api/health -> ${res.status} ${JSON.stringify(body)}`);
process.exit(res.ok && body.status === 'ok' ? 0 : 1);

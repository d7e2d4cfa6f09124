/**
 * The demo web app that `npm start` tests against: a tiny shop on localhost.
 * Under /broken it answers like a bad deploy, so the `broken` environment fails.
 */
import http from 'node:http';

const PASSWORD_ENV = 'DEMO_SHOP_PASSWORD';

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const HOME = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo shop</title></head>
<body><h1>Welcome to the runset demo shop</h1>
<form id="login"><label>User <input name="user"></label><label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form><p id="message" role="status"></p>
<script>
document.getElementById('login').addEventListener('submit', async (e) => {
  e.preventDefault();
  const data = Object.fromEntries(new FormData(e.target));
  const res = await fetch('api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });
  document.getElementById('message').textContent = res.ok ? 'Signed in as ' + data.user : 'Sign-in failed';
});
</script></body></html>`;

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, password: string): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const broken = url.pathname === '/broken' || url.pathname.startsWith('/broken/');
  const route = broken ? url.pathname.slice('/broken'.length) || '/' : url.pathname;
  if (broken && route === '/') return send(res, 500, 'text/html', '<h1>Internal Server Error</h1>');
  if (route === '/') return send(res, 200, 'text/html; charset=utf-8', HOME);
  if (route === '/api/health') {
    return broken
      ? send(res, 503, 'application/json', JSON.stringify({ status: 'down', reason: 'database unreachable' }))
      : send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
  }
  if (route === '/api/login' && req.method === 'POST') {
    let body: { user?: unknown; password?: unknown } = {};
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      return send(res, 400, 'application/json', JSON.stringify({ error: 'expected JSON' }));
    }
    const ok = !broken && body.user === 'demo' && body.password === password;
    return send(res, ok ? 200 : 401, 'application/json', JSON.stringify(ok ? { user: 'demo' } : { error: 'bad credentials' }));
  }
  send(res, 404, 'text/plain', 'not found');
}

/** Starts the shop; resolves with its server once listening. */
export async function startDemoShop(port: number, host = '127.0.0.1'): Promise<http.Server> {
  const password = process.env[PASSWORD_ENV] ?? 'demo-password';
  const server = http.createServer((req, res) => {
    handle(req, res, password).catch(() => send(res, 500, 'text/plain', 'error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`the demo shop's port ${host}:${port} is in use (another \`runset demo\`?); stop what listens there and start again`) : err),
    );
    server.listen(port, host, resolve);
  });
  return server;
}

export { PASSWORD_ENV as DEMO_PASSWORD_ENV };

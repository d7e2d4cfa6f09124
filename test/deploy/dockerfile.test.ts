/**
 * The Dockerfile, checked in every way that needs no container engine (CI has
 * none; deploy/image/try-here.sh builds and runs the image with podman on a
 * machine like runset's development one, and docs/deploy.md says what that run
 * verified and what it did not):
 * its instructions parse; it is multi-stage on Node 20 with a slim runtime and
 * Debian's Chromium; it runs as a non-root user with /data as a volume; EXPOSE
 * is runset's default port; HEALTHCHECK is exec-form node on a real route;
 * ENTRYPOINT is exec-form under tini and reaches real CLI commands; every COPY
 * from the context exists and is not left out by .dockerignore, and the build
 * stage's COPY . . carries what `npm run build` reads; nothing of one build
 * machine's network is in it. The entrypoint script and the health check
 * script run here for real.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import path from 'node:path';
import { DEFAULT_CHROMIUM } from '../../src/executors/playwright/chromium.js';
import { DEFAULTS } from '../../src/config/options.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/server.js';
import { dockerIgnored, parseDockerfile, type Instruction } from '../helpers/dockerfile.js';

const DOCKERFILE = parseDockerfile(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const IGNORE = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8');
const stages = () => {
  const out: Array<{ from: string; name?: string; body: Instruction[] }> = [];
  for (const i of DOCKERFILE) {
    if (i.keyword === 'FROM') {
      const [from, as, name] = i.args.split(/\s+/);
      out.push({ from: from!, name: as?.toUpperCase() === 'AS' ? name : undefined, body: [] });
    } else out.at(-1)?.body.push(i);
  }
  return out;
};
const runtime = () => stages().at(-1)!;
const one = (keyword: string) => {
  const found = runtime().body.filter((i) => i.keyword === keyword);
  assert.equal(found.length, 1, `one ${keyword} in the runtime stage`);
  return found[0]!;
};
const execForm = (i: Instruction) => {
  const parsed = JSON.parse(i.args.replace(/^(--\S+\s+)*(CMD\s+)?/, '')) as unknown;
  assert.ok(Array.isArray(parsed), `${i.keyword} is in exec form (JSON array): ${i.args}`);
  return parsed as string[];
};
const env = () => Object.fromEntries(runtime().body.filter((i) => i.keyword === 'ENV').flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])));

test('multi-stage: a Node 20 build stage, a Node 20 slim runtime with Debian\'s Chromium and tini', () => {
  const all = stages();
  assert.ok(all.length >= 2, 'at least two stages');
  assert.match(all[0]!.from, /^node:20-bookworm$/);
  assert.match(runtime().from, /^node:20-bookworm-slim$/);
  const build = all[0]!.body.filter((i) => i.keyword === 'RUN').map((i) => i.args).join('\n');
  for (const step of [/npm ci\b/, /npm run build\b/, /npm prune --omit=dev\b/]) assert.match(build, step);
  const install = runtime().body.filter((i) => i.keyword === 'RUN').map((i) => i.args).join('\n');
  assert.match(install, /apt-get install[^\n]*\bchromium\b/);
  assert.match(install, /apt-get install[^\n]*\btini\b/);
  assert.match(install, /rm -rf \/var\/lib\/apt\/lists/);
  assert.equal(env().RUNSET_CHROMIUM, DEFAULT_CHROMIUM, 'RUNSET_CHROMIUM names Debian\'s chromium');
  // Every COPY --from names an earlier stage, and copies what that stage built.
  for (const c of runtime().body.filter((i) => i.keyword === 'COPY' && i.args.startsWith('--from='))) {
    assert.equal(/--from=(\S+)/.exec(c.args)?.[1], all[0]!.name, c.args);
  }
});

test('non-root, /data a volume owned by that user, EXPOSE the default port, defaults that serve from outside', () => {
  const user = one('USER').args;
  assert.match(user, /^\d+(:\d+)?$/, 'a numeric USER, so Kubernetes\' runAsNonRoot can check it');
  assert.notEqual(Number(user.split(':')[0]), 0);
  assert.match(runtime().body.map((i) => i.args).join('\n'), new RegExp(`useradd[^\\n]*--uid ${user.split(':')[0]}\\b`));
  assert.match(runtime().body.map((i) => i.args).join('\n'), /chown runset:runset \/data/);
  assert.deepEqual(execForm(one('VOLUME')), ['/data']);
  assert.equal(one('EXPOSE').args, String(DEFAULTS.port));
  const e = env();
  assert.equal(e.RUNSET_DATA_DIR, '/data');
  assert.equal(e.RUNSET_HOST, '0.0.0.0', 'listens beyond the container\'s loopback');
  assert.equal(e.RUNSET_PORT, one('EXPOSE').args);
});

test('HEALTHCHECK runs node on /api/health, a route the API has; ENTRYPOINT is exec form under tini', () => {
  const hc = one('HEALTHCHECK');
  const argv = execForm(hc);
  assert.equal(argv[0], 'node', 'no curl in the slim image: node does the request');
  const script = argv[1]!;
  const copied = runtime().body.find((i) => i.keyword === 'COPY' && i.args.endsWith(` ${script}`));
  assert.ok(copied, `${script} is copied into the image`);
  const source = readFileSync(path.join(REPO_ROOT, copied.args.split(/\s+/)[0]!), 'utf8');
  assert.match(source, /\/api\/health/);
  // The route itself answers on a real serve in test/deploy/kubernetes.test.ts (the probes' path).
  assert.match(readFileSync(path.join(REPO_ROOT, 'src/api/routes/health.ts'), 'utf8'), /'\/health'/);
  const entry = execForm(one('ENTRYPOINT'));
  assert.deepEqual(entry.slice(0, 2), ['/usr/bin/tini', '--'], 'tini is PID 1: it forwards SIGTERM and reaps orphans');
  assert.deepEqual(execForm(one('CMD')), []);
});

test('every COPY source exists and is in the build context (.dockerignore leaves it in)', () => {
  for (const stage of stages()) {
    for (const c of stage.body.filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='))) {
      const parts = c.args.replace(/--\S+\s+/g, '').split(/\s+/);
      for (const src of parts.slice(0, -1)) {
        if (src === '.') continue;
        assert.ok(existsSync(path.join(REPO_ROOT, src)), `COPY ${src}: no such file in the repository`);
        assert.equal(dockerIgnored(IGNORE, src), false, `COPY ${src}: .dockerignore leaves it out of the context`);
      }
    }
  }
  // `COPY . .` then `npm run build`: what the build reads is in the context, what it makes is not.
  for (const kept of ['package.json', 'package-lock.json', 'tsconfig.json', 'src/cli/main.ts', 'src/dashboard/ui/tsconfig.json', 'test/helpers/server.ts', 'bench', 'examples/demo/runset.config.yaml', 'deploy/image/entrypoint.sh']) {
    assert.equal(dockerIgnored(IGNORE, kept), false, `${kept} is in the context`);
  }
  for (const left of ['node_modules', 'dist', '.git', '.runset', 'examples/demo/e2e/node_modules', 'tsconfig.tsbuildinfo', 'deploy/kubernetes/base/api.yaml']) {
    assert.equal(dockerIgnored(IGNORE, left), true, `${left} is left out of the context`);
  }
});

test('nothing of one build machine in the file; podman builds keep HEALTHCHECK; try-here.sh parses', () => {
  // A proxy's CA, a registry or node-gyp's headers are given at build time (try-here.sh mounts them), never written here.
  const text = DOCKERFILE.map((i) => `${i.keyword} ${i.args}`).join('\n');
  assert.doesNotMatch(text, /NODE_EXTRA_CA_CERTS|SSL_CERT|cafile|npmrc|registry|nodedir|strict-ssl|_proxy\b|\.crt\b|\.pem\b/i);
  // podman builds OCI images by default, and the OCI format has no HEALTHCHECK: the real build warned and dropped it.
  const tryHere = path.join(REPO_ROOT, 'deploy/image/try-here.sh');
  assert.match(readFileSync(tryHere, 'utf8'), /podman build [^\n]*--format docker/);
  assert.match(readFileSync(path.join(REPO_ROOT, 'docs/deploy.md'), 'utf8'), /podman build --format docker/);
  const parsed = spawnSync('bash', ['-n', tryHere], { encoding: 'utf8' });
  assert.equal(parsed.status, 0, parsed.stderr);
});

test('the entrypoint: no arguments serve a config when there is one, else the demo; arguments go to runset', () => {
  // A stand-in for /app's CLI that prints what it was asked; the script itself runs for real.
  const home = tempDir('runset-image-');
  mkdirSync(path.join(home, 'dist/src/cli'), { recursive: true });
  writeFileSync(path.join(home, 'dist/src/cli/main.js'), 'console.log(JSON.stringify(process.argv.slice(2)))\n');
  const suite = tempDir('runset-suite-');
  const run = (args: string[], extra: Record<string, string> = {}, cwd = home) => {
    const out = spawnSync('sh', [path.join(REPO_ROOT, 'deploy/image/entrypoint.sh'), ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, RUNSET_HOME: home, ...extra } });
    assert.equal(out.status, 0, out.stderr);
    return out.stdout.trim();
  };
  assert.equal(run([]), '["demo"]');
  assert.equal(run([], { RUNSET_CONFIG: '/suite/runset.config.yaml' }), '["serve"]');
  writeFileSync(path.join(suite, 'runset.config.yaml'), '');
  assert.equal(run([], {}, suite), '["serve"]');
  assert.equal(run(['worker', '--url', 'http://api/api', '--key-file', '/k']), '["worker","--url","http://api/api","--key-file","/k"]');
  assert.equal(run(['runset', 'keys', 'list']), '["keys","list"]');
  assert.equal(run(['--version']), '["--version"]');
  assert.equal(run(['sh', '-c', 'echo shell']), 'shell');
  // The real CLI has the commands the image's defaults and docs use.
  const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
  for (const command of ['serve', 'worker', 'demo', 'keys']) assert.match(help, new RegExp(`^  ${command}\\b`, 'm'));
});

test('the health check: 0 on a 200 from /api/health (on RUNSET_PORT or serve\'s --port), 1 on a 503 or nothing listening, 0 in a worker container', async () => {
  const script = path.join(REPO_ROOT, 'deploy/image/healthcheck.mjs');
  let status = 200;
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/api/health' ? status : 404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = String((server.address() as AddressInfo).port);
  const noCmdline = path.join(tempDir(), 'cmdline');
  writeFileSync(noCmdline, ['/usr/bin/tini', '--', '/usr/local/bin/runset-entrypoint', 'serve'].join('\0'));
  const check = (cmdline: string, p = port) =>
    new Promise<number | null>((resolve) => spawn(process.execPath, [script, cmdline], { env: { ...process.env, RUNSET_PORT: p }, stdio: 'ignore' }).on('exit', resolve));
  try {
    assert.equal(await check(noCmdline), 0);
    status = 503;
    assert.equal(await check(noCmdline), 1);
    const workerCmdline = path.join(tempDir(), 'cmdline');
    writeFileSync(workerCmdline, ['/usr/bin/tini', '--', '/usr/local/bin/runset-entrypoint', 'worker', '--url', 'http://api'].join('\0'));
    assert.equal(await check(workerCmdline), 0);
    // `docker run … runset serve --port N`: the port of the command line, not RUNSET_PORT's default.
    status = 200;
    for (const args of [['--port', port], [`--port=${port}`]]) {
      const flagged = path.join(tempDir(), 'cmdline');
      writeFileSync(flagged, ['/usr/bin/tini', '--', '/usr/local/bin/runset-entrypoint', 'serve', ...args].join('\0'));
      assert.equal(await check(flagged, '1'), 0, args.join(' '));
    }
  } finally {
    await new Promise((r) => server.close(r));
  }
  assert.equal(await check(noCmdline, port), 1, 'nothing listening');
});

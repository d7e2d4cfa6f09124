/**
 * A Playwright suite shaped like the real one that broke (issue 43): its
 * `webServer` command starts with the suite's own tool (`cross-env PORT=…
 * node server.js`, found only on the suite's node_modules/.bin), and its
 * server serves the suite's build output, `dist/`, which its `.gitignore`
 * leaves out. Its one test asks the server for the page and finds the built
 * text (Playwright's request fixture: no browser).
 *
 * Two shapes:
 * - `writeLocalToolSuite`: a server's own suite, its tool a hand-written shim
 *   in its node_modules/.bin (`cross-env A=b cmd` is `env A=b cmd`), no network;
 * - `writeUploadedToolSuite`: a suite to upload, with package.json and lockfile
 *   (the real cross-env 7.0.3, from npm, installed by the worker's `npm ci`),
 *   `.runsetignore`'s `!/dist` re-including the build output, and an `.npmrc`
 *   whose setting `npm ci` needs: the package's postinstall fails without
 *   `legacy-peer-deps=true` (standing for the real suite's peer conflict, with
 *   no registry lookup) and waits for `release` to exist, so a test sees the
 *   worker preparing the suite.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './webserver-suite.js';

export const BUILT_TEXT = 'built by the suite';
/** A credential line of the suite's .npmrc: never packed, never sent. */
export const NPM_TOKEN = 'npm_tokenValueNeverUploaded123';

export interface ToolSuite {
  dir: string;
  port: number;
}

function writeCommon(dir: string, port: number): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  mkdirSync(path.join(dir, 'dist'), { recursive: true });
  writeFileSync(path.join(dir, 'dist', 'index.html'), `<!doctype html><p role="status">${BUILT_TEXT}</p>\n`);
  writeFileSync(path.join(dir, 'server.js'), `
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
// The build output: a missing dist/ fails here, as the real suite's server did (ENOENT … lstat 'dist').
fs.lstatSync(path.join(__dirname, 'dist'));
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(fs.readFileSync(path.join(__dirname, 'dist', 'index.html')));
}).listen(Number(process.env.PORT), '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
`);
  writeFileSync(path.join(dir, 'playwright.config.js'), `
module.exports = {
  testDir: 'tests',
  workers: 1,
  use: { baseURL: 'http://127.0.0.1:${port}' },
  webServer: { command: 'cross-env PORT=${port} node server.js', port: ${port}, reuseExistingServer: false, timeout: 30000 },
};
`);
  writeFileSync(path.join(dir, 'tests', 'shop.spec.js'), `
const { test, expect } = require('@playwright/test');
test('the built page is served', async ({ request }) => {
  const res = await request.get('/');
  expect(await res.text()).toContain(${JSON.stringify(BUILT_TEXT)});
});
`);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: shop, type: playwright, dir: ., workers: 1 }\n');
}

/** A server's own suite: its cross-env is a shim in its node_modules/.bin. */
export async function writeLocalToolSuite(dir: string): Promise<ToolSuite> {
  const port = await freePort();
  writeCommon(dir, port);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"shop-e2e","private":true}\n');
  mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  const shim = path.join(dir, 'node_modules', '.bin', 'cross-env');
  writeFileSync(shim, '#!/bin/sh\nexec env "$@"\n');
  chmodSync(shim, 0o755);
  return { dir, port };
}

/** The lockfile `npm install --package-lock-only` wrote for cross-env 7.0.3 (npm 11). */
const CROSS_ENV_PACKAGES = {
  'node_modules/cross-env': {
    version: '7.0.3',
    integrity: 'sha512-+/HKd6EgcQCJGh2PSjZuUitQBQynKor4wrFbRg4DtAgS1aWO+gU52xpH7M9ScGgXSYmAVS9bIJ8EzuaGw0oNAw==',
    license: 'MIT',
    dependencies: { 'cross-spawn': '^7.0.1' },
    bin: { 'cross-env': 'src/bin/cross-env.js', 'cross-env-shell': 'src/bin/cross-env-shell.js' },
    engines: { node: '>=10.14', npm: '>=6', yarn: '>=1' },
  },
  'node_modules/cross-spawn': {
    version: '7.0.6',
    integrity: 'sha512-uV2QOWP2nWzsy2aMp8aRibhi9dlzF5Hgh5SHaB9OiTGEyDTiJJyx0uy51QXdyWbtAHNua4XJzUKca3OzKUd3vA==',
    license: 'MIT',
    dependencies: { 'path-key': '^3.1.0', 'shebang-command': '^2.0.0', which: '^2.0.1' },
    engines: { node: '>= 8' },
  },
  'node_modules/isexe': {
    version: '2.0.0',
    integrity: 'sha512-RHxMLp9lnKHGHRng9QFhRCMbYAcVpn69smSGcq3f36xjgVVWThj4qqLbTLlq7Ssj8B+fIQ1EuCEGI2lKsyQeIw==',
    license: 'ISC',
  },
  'node_modules/path-key': {
    version: '3.1.1',
    integrity: 'sha512-ojmeN0qd+y0jszEtoY48r0Peq5dwMEkIlCOu6Q5f41lfkswXuKtYrhgoTpLnyIcHm24Uhqx+5Tqm2InSwLhE6Q==',
    license: 'MIT',
    engines: { node: '>=8' },
  },
  'node_modules/shebang-command': {
    version: '2.0.0',
    integrity: 'sha512-kHxr2zZpYtdmrN1qDjrrX/Z1rR1kG8Dx+gkpK1G4eXmvXswmcE1hTWBWYUzlraYw1/yZp6YuDY77YtvbN0dmDA==',
    license: 'MIT',
    dependencies: { 'shebang-regex': '^3.0.0' },
    engines: { node: '>=8' },
  },
  'node_modules/shebang-regex': {
    version: '3.0.0',
    integrity: 'sha512-7++dFhtcx3353uBaq8DDR4NuxBetBzC7ZQOhmTQInHEd6bSrXdiEyzCvG07Z44UYdLShWUyXt5M/yhz8ekcb1A==',
    license: 'MIT',
    engines: { node: '>=8' },
  },
  'node_modules/which': {
    version: '2.0.2',
    integrity: 'sha512-BLI3Tl1TW3Pvl70l3yq3Y64i+awpwXqsGBYWkkqMtnbXgrMD+yj7rhW0kuEDxzJaYXGjEW5ogapKNMEKNMjibA==',
    license: 'ISC',
    dependencies: { isexe: '^2.0.0' },
    bin: { 'node-which': 'bin/node-which' },
    engines: { node: '>= 8' },
  },
};

/**
 * A suite to upload. `release`: the file whose existence lets its install
 * finish (absolute, outside the suite). A `.npmrc` with the setting and a
 * credential line (which must never leave the machine).
 */
export async function writeUploadedToolSuite(dir: string, release: string): Promise<ToolSuite> {
  const port = await freePort();
  writeCommon(dir, port);
  const check = [
    "const fs = require('node:fs');",
    "if (process.env.npm_config_legacy_peer_deps !== 'true') { console.error('npm error ERESOLVE could not resolve: this suite installs with legacy-peer-deps=true (its .npmrc)'); process.exit(1); }",
    `const until = Date.now() + 60000; while (!fs.existsSync(${JSON.stringify(release)}) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);`,
  ].join(' ');
  const manifest = { name: 'shop-e2e', version: '1.0.0', private: true, scripts: { postinstall: `node -e ${JSON.stringify(check)}` }, dependencies: { 'cross-env': '7.0.3' } };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const lock = {
    name: 'shop-e2e', version: '1.0.0', lockfileVersion: 3, requires: true,
    packages: { '': { name: 'shop-e2e', version: '1.0.0', hasInstallScript: true, dependencies: { 'cross-env': '7.0.3' } }, ...CROSS_ENV_PACKAGES },
  };
  writeFileSync(path.join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  writeFileSync(path.join(dir, '.npmrc'), `legacy-peer-deps=true\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n`);
  writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\ndist/\n');
  writeFileSync(path.join(dir, '.runsetignore'), '!/dist\n');
  // A command of the same suite, its tool from the same node_modules/.bin.
  writeFileSync(path.join(dir, 'runset.config.yaml'), [
    'tests:',
    '  - { name: shop, type: playwright, dir: ., workers: 1 }',
    '  - { name: tool, type: command, run: [cross-env, GREETING=from-cross-env, node, -e, "console.log(process.env.GREETING)"] }',
    '',
  ].join('\n'));
  return { dir, port };
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch } from 'undici';
import type { HttpTestSpec, OutboundPolicy } from '../../src/core/types.js';
import { createHttpExecutor } from '../../src/executors/http/index.js';
import {
  checkHost,
  classifyAddress,
  outboundDispatcher,
  outboundRefusalIn,
  resolveChecked,
  type Resolver,
} from '../../src/net/outbound.js';

const STRICT: OutboundPolicy = { allowPrivateTargets: false };
const PRIVATE_OK: OutboundPolicy = { allowPrivateTargets: true };

describe('classifyAddress', () => {
  const table: Array<[string, string | null]> = [
    // cloud metadata, in every spelling a URL or a resolver may carry
    ['169.254.169.254', 'metadata'],
    ['2852039166', 'metadata'], // decimal
    ['0251.0376.0251.0376', 'metadata'], // octal
    ['0xa9fea9fe', 'metadata'], // hex
    ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
    ['169.254.43518', 'metadata'], // short forms
    ['169.16689662', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'], // IPv4-mapped IPv6
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['[::ffff:a9fe:a9fe]', 'metadata'],
    ['::ffff:0:a9fe:a9fe', 'metadata'], // SIIT
    ['64:ff9b::a9fe:a9fe', 'metadata'], // NAT64
    ['::a9fe:a9fe', 'metadata'], // IPv4-compatible
    ['2002:a9fe:a9fe::1', 'metadata'], // 6to4
    ['fd00:ec2::254', 'metadata'], // AWS over IPv6 (inside fc00::/7, yet never allowed)
    ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
    ['fd20:ce::254', 'metadata'], // Google Cloud over IPv6
    ['100.100.100.200', 'metadata'], // Alibaba (inside 100.64/10)
    ['169.254.170.2', 'metadata'], // AWS ECS
    ['168.63.129.16', 'metadata'], // Azure WireServer (a public address)
    ['169.254.0.23', 'metadata'], // Tencent
    // link-local
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.1.1', 'link-local'],
    // private
    ['10.0.0.1', 'private'],
    ['012.0.0.1', 'private'], // octal 10.0.0.1
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.1.2.3', 'private'],
    // the machine itself
    ['127.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    // elsewhere
    ['224.0.0.1', 'not-unicast'],
    ['255.255.255.255', 'not-unicast'],
    ['ff02::1', 'not-unicast'],
    ['93.184.215.14', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    // names are not addresses
    ['example.com', null],
    ['metadata.google.internal', null],
    ['169.254.169.254.nip.io', null],
  ];
  for (const [text, kind] of table) {
    test(`${text} → ${String(kind)}`, () => assert.equal(classifyAddress(text), kind));
  }
});

describe('checkHost (before DNS)', () => {
  test('refuses the metadata DNS names of the major clouds, in any case and with a final dot', () => {
    for (const name of ['metadata.google.internal', 'METADATA.google.internal.', 'metadata', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']) {
      assert.match(checkHost(name, PRIVATE_OK)?.message ?? '', /is a cloud metadata host name; runset never sends requests there/, name);
    }
  });

  test('says why, naming the address: metadata and link-local always, private unless allowed', () => {
    assert.equal(checkHost('169.254.169.254', PRIVATE_OK)?.message, 'refused: 169.254.169.254 is a cloud metadata address; runset never sends requests there');
    assert.match(checkHost('[fe80::1]', PRIVATE_OK)?.message ?? '', /^refused: fe80::1 is a link-local address .*never sends requests there$/);
    assert.match(checkHost('10.0.0.1', STRICT)?.message ?? '', /^refused: 10\.0\.0\.1 is a private address .*allowPrivateTargets: true$/);
    assert.equal(checkHost('10.0.0.1', PRIVATE_OK), null);
    assert.equal(checkHost('fd00:ec2::254', PRIVATE_OK)?.target, 'fd00:ec2::254', 'metadata inside a private range is never allowed');
    assert.equal(checkHost('100.100.100.200', PRIVATE_OK)?.target, '100.100.100.200');
    assert.equal(checkHost('127.0.0.1', STRICT), null);
    assert.equal(checkHost('example.com', STRICT), null);
  });
});

describe('resolveChecked (after DNS)', () => {
  const resolve = fakeResolver({
    'ok.test': ['127.0.0.1'],
    'meta.test': ['169.254.169.254'],
    'mixed.test': ['127.0.0.1', '::ffff:a9fe:a9fe'],
    'lan.test': ['192.168.1.20'],
    'nothing.test': [],
  });

  test('every resolved address must pass, or the name is refused naming the address', async () => {
    assert.deepEqual(await resolveChecked('ok.test', STRICT, resolve), [{ address: '127.0.0.1', family: 4 }]);
    await assert.rejects(resolveChecked('meta.test', PRIVATE_OK, resolve), {
      message: 'refused: meta.test resolves to 169.254.169.254, a cloud metadata address; runset never sends requests there',
    });
    await assert.rejects(resolveChecked('mixed.test', PRIVATE_OK, resolve), /mixed\.test resolves to ::ffff:a9fe:a9fe, a cloud metadata address/);
    await assert.rejects(resolveChecked('lan.test', STRICT, resolve), /lan\.test resolves to 192\.168\.1\.20, a private address/);
    assert.equal((await resolveChecked('lan.test', PRIVATE_OK, resolve)).length, 1);
    await assert.rejects(resolveChecked('nothing.test', STRICT, resolve), { code: 'ENOTFOUND' });
    await assert.rejects(resolveChecked('metadata.google.internal', PRIVATE_OK, resolve), /cloud metadata host name/);
  });
});

describe('the http executor behind the outbound dispatcher', () => {
  let server: Server;
  let port: number;
  const hits: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      if (to) res.writeHead(302, { location: to }).end();
      else res.end('hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const resolve = fakeResolver({ 'app.test': ['127.0.0.1'], 'meta.test': ['169.254.169.254'], 'lan.test': ['10.9.8.7'] });
  const executor = createHttpExecutor({ resolve });
  const run = (url: string, outbound: OutboundPolicy = STRICT) =>
    executor.run(spec(url), { variables: {}, signal: AbortSignal.timeout(5000), outbound });

  test('a name that resolves to an allowed address is reached (through the injected resolver)', async () => {
    const result = await run(`http://app.test:${port}/`);
    assert.equal(result.error, null);
    assert.equal(result.passed, true);
  });

  const refusedTargets: Array<[string, RegExp]> = [
    ['http://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is a cloud metadata address; runset never sends requests there/],
    ['http://2852039166/', /refused: 169\.254\.169\.254 is a cloud metadata address/],
    ['http://0251.0376.0251.0376/', /refused: 169\.254\.169\.254 is a cloud metadata address/],
    ['http://0xa9fea9fe/', /refused: 169\.254\.169\.254 is a cloud metadata address/],
    ['http://[::ffff:169.254.169.254]/', /refused: ::ffff:a9fe:a9fe is a cloud metadata address/],
    ['http://[fd00:ec2::254]/', /refused: fd00:ec2::254 is a cloud metadata address/],
    ['http://[fe80::1]/', /refused: fe80::1 is a link-local address/],
    ['http://169.254.3.4/', /refused: 169\.254\.3\.4 is a link-local address/],
    ['http://metadata.google.internal/computeMetadata/v1/', /refused: metadata\.google\.internal is a cloud metadata host name/],
    ['http://meta.test/', /refused: meta\.test resolves to 169\.254\.169\.254, a cloud metadata address/],
    ['http://lan.test/', /refused: lan\.test resolves to 10\.9\.8\.7, a private address .*allowPrivateTargets: true/],
  ];
  for (const [target, reason] of refusedTargets) {
    test(`refuses ${target}, directly and after a redirect, with the reason as the member's error`, async () => {
      const direct = await run(target);
      assert.equal(direct.passed, false);
      assert.match(direct.error ?? '', reason);
      const redirected = await run(`http://app.test:${port}/go?to=${encodeURIComponent(target)}`);
      assert.equal(redirected.passed, false);
      assert.match(redirected.error ?? '', reason);
      assert.match(redirected.error ?? '', /^GET http:\/\/app\.test:\d+\/go\?to=\S+ failed: refused: /);
    });
  }

  test('allowPrivateTargets opens private ranges but never metadata, even after a redirect', async () => {
    const lan = await run('http://lan.test:9/', PRIVATE_OK);
    assert.doesNotMatch(lan.error ?? '', /refused/, 'a private target is attempted (and fails to connect, there is nothing there)');
    const meta = await run(`http://app.test:${port}/go?to=${encodeURIComponent('http://100.100.100.200/latest/meta-data/')}`, PRIVATE_OK);
    assert.match(meta.error ?? '', /refused: 100\.100\.100\.200 is a cloud metadata address/);
  });

  test('a redirect chain is checked at every hop', async () => {
    const second = `http://app.test:${port}/hop?to=${encodeURIComponent('http://meta.test/')}`;
    const result = await run(`http://127.0.0.1:${port}/first?to=${encodeURIComponent(second)}`);
    assert.match(result.error ?? '', /refused: meta\.test resolves to 169\.254\.169\.254/);
    assert.ok(hits.some((hit) => hit.startsWith('/hop')), 'the allowed hop was reached');
  });

  test('outboundDispatcher works with undici fetch as well (what webhook delivery uses)', async () => {
    const dispatcher = outboundDispatcher(STRICT, { resolve });
    const ok = await fetch(`http://app.test:${port}/`, { dispatcher });
    assert.equal(await ok.text(), 'hello');
    const error = await fetch('http://meta.test/', { dispatcher }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.equal(outboundRefusalIn(error)?.code, 'ERR_RUNSET_OUTBOUND_REFUSED');
    assert.equal(outboundRefusalIn(error)?.target, 'meta.test');
  });
});

function fakeResolver(table: Record<string, string[]>): Resolver {
  return (hostname) => {
    const addresses = table[hostname];
    if (!addresses) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

function spec(url: string): HttpTestSpec {
  return { name: 'check', type: 'http', tags: [], timeoutSeconds: 5, retries: 0, request: { method: 'GET', url }, expect: {} };
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileServeOptions, type RawServeFlags } from '../../src/cli/serve.js';
import { listenBacklog } from '../../src/config/options.js';
import { chooseSetRetention, retentionLabel } from '../../src/retention/sets.js';

const flags: RawServeFlags = {
  config: 'runset.config.yaml', port: '0', host: '127.0.0.1', dataDir: '.runset', databaseSchema: 'runset',
  lease: '30s', grace: '30s', setsPerMinute: '60', logLevel: 'warn',
};
const compile = (over: Partial<RawServeFlags>) => compileServeOptions({ ...flags, ...over }, { api: true });

test('a bad option value names the option, its variable, and what is accepted', () => {
  assert.equal(compile({}).leaseMs, 30_000);
  assert.throws(() => compile({ grace: '10x' }), /^Error: --grace \(RUNSET_GRACE\): invalid duration "10x": not a duration; expected /);
  assert.throws(() => compile({ poll: 'soon' }), /--poll \(RUNSET_POLL\): invalid duration "soon"/);
  assert.throws(() => compile({ lease: '50ms' }), /--lease \(RUNSET_LEASE\) must be at least 200ms, such as 30s; got "50ms"/);
  assert.throws(() => compile({ artifactRetention: '0s' }), /--artifact-retention \(RUNSET_ARTIFACT_RETENTION\) must be at least 1ms/);
  assert.throws(() => compile({ poll: '0' }), /--poll \(RUNSET_POLL\) must be at least 10ms, such as 1s; got "0"/);
  assert.throws(() => compile({ logLevel: 'loud' }), /--log-level \(RUNSET_LOG_LEVEL\) must be one of fatal, error, warn, info, debug, trace, silent; got "loud"/);
});

test('--backlog (RUNSET_BACKLOG): 4096 by default, a whole number, never above the kernel somaxconn', () => {
  assert.equal(compile({}).backlog, 4096);
  assert.equal(compile({ backlog: '10000' }).backlog, 10_000);
  assert.throws(() => compile({ backlog: 'many' }), /--backlog \(RUNSET_BACKLOG\) must be a whole number from 1 to 1000000, got "many"/);
  assert.deepEqual(listenBacklog(4096, 4096), { backlog: 4096, capped: false });
  assert.deepEqual(listenBacklog(4096, 511), { backlog: 511, capped: true });
  assert.deepEqual(listenBacklog(100, undefined), { backlog: 100, capped: false });
});

test('--metrics-port (RUNSET_METRICS_PORT): off unless given, a port apart from the API, 0 for any free one', () => {
  assert.equal(compile({}).metricsPort, undefined);
  assert.equal(compile({ metricsPort: '' }).metricsPort, undefined);
  assert.equal(compile({ metricsPort: '9464' }).metricsPort, 9464);
  assert.equal(compile({ metricsPort: '0' }).metricsPort, 0);
  assert.equal(compile({ port: '0', metricsPort: '0' }).metricsPort, 0);
  for (const bad of ['-1', '65536', '9464.5', 'nine', '0x10']) {
    assert.throws(() => compile({ metricsPort: bad }), new RegExp(`^Error: --metrics-port \\(RUNSET_METRICS_PORT\\): "${bad.replace('.', '\\.')}" is not a port; expected a port number from 1 to 65535 \\(0: any free port\\), other than the API's --port; leave it unset for no metrics$`));
  }
  assert.throws(() => compile({ port: '8080', metricsPort: '8080' }), /: 8080 is the API's --port too; expected a port number/);
  // A worker serves no API: any port is its own.
  assert.equal(compileServeOptions({ ...flags, port: '0', metricsPort: '0' }, { api: false }).metricsPort, 0);
});

test('--retention (RUNSET_RETENTION): unset leaves it to the store; given, it applies on every store, 0 keeping every set', () => {
  assert.equal(compile({}).retentionMs, undefined);
  assert.equal(compile({ retention: '' }).retentionMs, undefined, 'an empty variable is unset');
  assert.equal(compile({ retention: '0' }).retentionMs, 0);
  assert.equal(compile({ retention: '30d' }).retentionMs, 30 * 86_400_000);
  assert.throws(() => compile({ retention: 'soon' }), /--retention \(RUNSET_RETENTION\): invalid duration "soon"/);
  const days90 = 90 * 86_400_000;
  assert.deepEqual(chooseSetRetention(undefined, 'default'), { ms: days90, source: 'default' }, 'a store made with retention: the default');
  assert.deepEqual(chooseSetRetention(undefined, 'keep'), { ms: 0, source: 'store' }, 'a store from before retention: every set kept');
  assert.deepEqual(chooseSetRetention(days90, 'keep'), { ms: days90, source: 'given' }, 'the operator chose');
  assert.deepEqual(chooseSetRetention(0, 'default'), { ms: 0, source: 'given' });
  assert.deepEqual([retentionLabel(days90), retentionLabel(2000), retentionLabel(90 * 60_000)], ['90d', '2.0s', '1h 30m']);
});

test('--max-suite-size (RUNSET_MAX_SUITE_SIZE): a size in bytes or with a unit of 1024; unset is the default', () => {
  assert.equal(compile({}).maxSuiteBytes, undefined, 'unset: the store takes DEFAULT_MAX_SUITE_BYTES');
  assert.equal(compile({ maxSuiteSize: '50MB' }).maxSuiteBytes, 50 * 1024 * 1024);
  assert.equal(compile({ maxSuiteSize: '512k' }).maxSuiteBytes, 512 * 1024);
  assert.equal(compile({ maxSuiteSize: '1GiB' }).maxSuiteBytes, 1024 ** 3);
  assert.equal(compile({ maxSuiteSize: '2048' }).maxSuiteBytes, 2048);
  assert.equal(compile({ maxSuiteSize: '1.5MB' }).maxSuiteBytes, 1.5 * 1024 * 1024);
  for (const bad of ['big', '50 parsecs', '-1', '2GB', '100']) {
    assert.throws(() => compile({ maxSuiteSize: bad }), new RegExp(`^Error: --max-suite-size \\(RUNSET_MAX_SUITE_SIZE\\): "${bad}" is not a size from 1KB to 1GB; expected a number of bytes or one with a unit \\(KB, MB, GB, TB: units of 1024\\), e\\.g\\. 50MB$`));
  }
});

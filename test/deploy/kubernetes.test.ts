/**
 * deploy/kubernetes, rendered and checked with no cluster (test/helpers/kubernetes.ts):
 * every overlay renders with `kubectl kustomize`; every object passes Kubernetes'
 * schemas (KEDA's ScaledObject its CRD's); what ties the objects together holds
 * (selectors, ports, Secrets, grace, the scaler's target and threshold); every
 * runset flag the containers pass is one the CLI has; and the ScaledObject's
 * PromQL query names a metric (and labels) that a real `serve` exposes, whose
 * value is the queue while no worker runs.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../../src/core/duration.js';
import { argValue, KUBERNETES_DIR, render, typeErrors, validateWithModel, type K8sObject } from '../helpers/kubernetes.js';
import { api, assertNoLeakedServers, CLI, REPO_ROOT, startRunset } from '../helpers/server.js';
import { metricsUrlIn, scrapeUntil, selectorsIn, valueOf } from '../helpers/prometheus.js';

afterEach(assertNoLeakedServers);
after(assertNoLeakedServers);

const OVERLAYS = readdirSync(path.join(KUBERNETES_DIR, 'overlays')).map((name) => path.join('overlays', name));
const TREES = ['base', ...OVERLAYS];

interface Container {
  name: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number }; tcpSocket?: { port: string | number } };
  startupProbe?: { httpGet?: { path: string; port: string | number } };
}
interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> } }>;
}
interface Workload extends K8sObject {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}
interface Scaler extends K8sObject {
  spec: { scaleTargetRef: { name: string; kind?: string }; minReplicaCount?: number; triggers: Array<{ type: string; metadata: Record<string, string> }> };
}

const find = <T extends K8sObject>(objects: readonly K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;
const container = (w: Workload) => w.spec.template.spec.containers[0]!;

/** The long flags `runset <command> --help` lists. */
function cliFlags(command: string): Set<string> {
  const help = spawnSync(process.execPath, [CLI, command, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  return new Set(help.stdout.match(/--[a-z][a-z-]*/g));
}

describe('deploy/kubernetes', () => {
  test('every overlay renders, and every object passes Kubernetes\' schemas and types (KEDA\'s for the ScaledObject)', async () => {
    assert.ok(OVERLAYS.length >= 2, `overlays: ${OVERLAYS.join(', ')}`);
    const all: K8sObject[] = [];
    for (const tree of TREES) {
      const objects = render(path.join(KUBERNETES_DIR, tree));
      assert.ok(objects.length >= 4, `${tree} renders objects`);
      const invalid = (await Promise.all(objects.map(validateWithModel))).filter((e) => e !== undefined);
      assert.deepEqual(invalid, [], `${tree}: schema errors`);
      all.push(...objects.map((o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, 'rendered-from': tree } } })));
    }
    // One TypeScript program for every tree (each object says which tree it came from).
    assert.deepEqual(typeErrors(all), [], 'fields that Kubernetes\' types do not have');
  });

  test('a misspelt field and a wrong type are caught (the checks bite)', async () => {
    const [deployment] = render(path.join(KUBERNETES_DIR, 'base')).filter((o) => o.kind === 'Deployment') as Workload[];
    const typo = structuredClone(deployment!);
    const c = container(typo) as Container & Record<string, unknown>;
    c.readinesProbe = c.readinessProbe;
    assert.equal(await validateWithModel(typo), undefined, 'the validators alone let an unknown field through');
    assert.match(typeErrors([typo]).join('\n'), /readinesProbe/);
    const wrong = structuredClone(deployment!);
    container(wrong).ports![0]!.containerPort = '8080' as unknown as number;
    assert.match((await validateWithModel(wrong)) ?? '', /containerPort must be integer/);
  });

  test('the objects fit together: selectors, ports and probes, Secrets, grace, the scaler', () => {
    const serveFlags = cliFlags('serve');
    const workerFlags = cliFlags('worker');
    const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const imagePort = Number(/^EXPOSE (\d+)$/m.exec(dockerfile)?.[1]);
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    for (const tree of TREES) {
      const objects = render(path.join(KUBERNETES_DIR, tree));
      const apiDeployment = find<Workload>(objects, 'Deployment', 'runset-api');
      const worker = find<Workload>(objects, 'Deployment', 'runset-worker');
      assert.ok(apiDeployment && worker, `${tree}: both Deployments`);
      for (const w of [apiDeployment, worker]) {
        const labels = w.spec.template.metadata.labels;
        for (const [k, v] of Object.entries(w.spec.selector.matchLabels)) assert.equal(labels[k], v, `${tree} ${w.metadata.name}: selector matches its pods`);
      }

      // The API: serve's real flags, probes on a named port the container has, the image's port.
      const apiC = container(apiDeployment);
      assert.equal(apiC.args?.[0], 'serve');
      for (const flag of apiC.args.filter((a) => a.startsWith('--'))) assert.ok(serveFlags.has(flag), `${tree}: serve has no ${flag}`);
      const ports = new Map(apiC.ports?.map((p) => [p.name, p.containerPort]));
      assert.equal(ports.get('http'), imagePort, `${tree}: the API's port is the image's EXPOSE`);
      assert.equal(ports.get('metrics'), Number(argValue(apiC.args, '--metrics-port')), `${tree}: the metrics port is named "metrics" (the scrape config keeps it)`);
      for (const probe of [apiC.readinessProbe, apiC.startupProbe]) assert.deepEqual(probe?.httpGet, { path: '/api/health', port: 'http' });
      assert.ok(apiC.livenessProbe?.tcpSocket ?? apiC.livenessProbe?.httpGet, `${tree}: a liveness probe`);
      const service = find<K8sObject & { spec: { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string }> } }>(objects, 'Service', 'runset-api');
      assert.ok(service);
      for (const [k, v] of Object.entries(service.spec.selector)) assert.equal(apiDeployment.spec.template.metadata.labels[k], v);
      assert.ok(service.spec.ports.every((p) => ports.has(p.targetPort)));
      const pdb = find<K8sObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(objects, 'PodDisruptionBudget', 'runset-api');
      assert.deepEqual(pdb?.spec.selector.matchLabels, apiDeployment.spec.selector.matchLabels, `${tree}: the PDB covers the API pods`);

      // The workers: over HTTP to the API's Service, the key from a mounted Secret, grace inside the pod's.
      const workerC = container(worker);
      const args = workerC.args!;
      assert.equal(args[0], 'worker');
      for (const flag of args.filter((a) => a.startsWith('--'))) assert.ok(workerFlags.has(flag), `${tree}: worker has no ${flag}`);
      const url = new URL(argValue(args, '--url')!);
      assert.equal(url.hostname, service.metadata.name, `${tree}: workers reach the API's Service`);
      assert.ok(service.spec.ports.some((p) => p.port === Number(url.port || 80)));
      const keyFile = argValue(args, '--key-file')!;
      const mount = workerC.volumeMounts?.find((m) => keyFile.startsWith(`${m.mountPath}/`));
      const volume = worker.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
      assert.equal(volume?.secret?.secretName, 'runset-worker-key', `${tree}: --key-file is in the worker key's Secret`);
      assert.ok(volume.secret.items?.some((i) => keyFile.endsWith(`/${i.path}`)));
      assert.ok(!workerC.envFrom?.length, `${tree}: a worker over HTTP holds no database URL or secret key`);
      const graceS = parseDuration(argValue(args, '--grace') ?? '30s') / 1000;
      assert.ok(worker.spec.template.spec.terminationGracePeriodSeconds! > graceS, `${tree}: terminationGracePeriodSeconds > --grace (${graceS} s)`);

      // Every Secret named is one docs/deploy.md tells how to create.
      assert.deepEqual(apiC.envFrom?.map((e) => e.secretRef?.name), ['runset']);
      for (const name of ['runset', 'runset-worker-key']) assert.match(doc, new RegExp(`create secret generic ${name}(?![\\w-])`), `docs/deploy.md creates the Secret ${name}`);

      // KEDA: scales the worker Deployment to zero, one pod per --workers waiting members.
      const scaler = find<Scaler>(objects, 'ScaledObject', 'runset-worker');
      if (tree.endsWith('fixed-workers')) {
        assert.equal(scaler, undefined);
        assert.ok(worker.spec.replicas! >= 1);
        continue;
      }
      assert.ok(scaler, `${tree}: a ScaledObject`);
      assert.equal(worker.spec.replicas, undefined, `${tree}: KEDA owns the workers' replicas`);
      assert.equal(scaler.spec.scaleTargetRef.name, worker.metadata.name);
      assert.equal(scaler.spec.minReplicaCount, 0);
      const [trigger] = scaler.spec.triggers;
      assert.equal(trigger?.type, 'prometheus');
      assert.equal(trigger.metadata.threshold, argValue(args, '--workers'), `${tree}: one pod per --workers waiting members`);
      assert.match(trigger.metadata.serverAddress!, /^https?:\/\//);
    }
  });

  test('the scaling query names what a real serve\'s /metrics has, and reads the queue while no worker runs', async () => {
    const [scaler] = render(path.join(KUBERNETES_DIR, 'base')).filter((o) => o.kind === 'ScaledObject') as Scaler[];
    const query = scaler!.spec.triggers[0]!.metadata.query!;
    const { metrics, labels } = selectorsIn(query);
    assert.deepEqual([...metrics].sort(), ['runset_members_running', 'runset_members_waiting'], `${query}: work waiting and work under way`);

    // The API's role in the cluster: serve with no workers of its own, metrics on their own port.
    const server = await startRunset({
      config: 'environments:\n  local:\ntests:\n  - { name: one, type: command, run: [node, -e, "0"] }\n  - { name: two, type: command, run: [node, -e, "0"] }\n',
      args: ['--no-workers', '--metrics-port', '0'],
    });
    try {
      const metricsUrl = metricsUrlIn(server.logs());
      assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the probes\' /api/health answers');
      const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } });
      assert.equal(created.status, 200, created.text);
      const s = await scrapeUntil(metricsUrl, (x) => valueOf(x, 'runset_members_waiting') === 2);
      for (const name of metrics) {
        assert.equal(s.types.get(name), 'gauge', `${name} is a gauge on /metrics`);
        const samples = s.samples.filter((x) => x.name === name);
        for (const label of labels) assert.ok(samples.some((x) => label in x.labels), `${name} has the label ${label} the query matches`);
      }
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});

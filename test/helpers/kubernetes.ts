/**
 * deploy/kubernetes checked offline, with no cluster: `kubectl kustomize` renders
 * an overlay exactly as `kubectl apply -k` would, and every object is checked
 * against Kubernetes' own schemas twice over:
 * - the `kubernetes-models` packages' validators (generated from Kubernetes'
 *   OpenAPI document; KEDA's from its CRDs): types, enums, required fields;
 * - TypeScript's excess-property check against the same packages' types, which
 *   the validators lack: a misspelt field (`readinesProbe`) is an error there,
 *   where the API server would drop it silently.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import ts from 'typescript';
import YAML from 'yaml';
import { REPO_ROOT } from './server.js';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: unknown;
  [field: string]: unknown;
}

export const KUBERNETES_DIR = path.join(REPO_ROOT, 'deploy', 'kubernetes');

/** kubectl's path, or a failure that says what to install. */
export function requireKubectl(): string {
  const install =
    'install kubectl 1.22 or later (its built-in kustomize renders deploy/kubernetes; no cluster is used): Kubernetes\' release binary ' +
    'or your distribution\'s kubectl package (Debian bookworm\'s kubernetes-client is 1.20, whose kustomize v2 lacks `labels` and `replicas`)';
  const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) assert.fail(`kubectl did not run: ${install}. (${probe.error?.message ?? probe.stderr})`);
  const { clientVersion } = JSON.parse(probe.stdout) as { clientVersion: { major: string; minor: string } };
  const minor = Number.parseInt(clientVersion.minor, 10);
  if (clientVersion.major !== '1' || minor < 22) assert.fail(`kubectl ${clientVersion.major}.${clientVersion.minor} is too old: ${install}`);
  return 'kubectl';
}

/** `kubectl kustomize DIR`, parsed: one object per YAML document. */
export function render(dir: string): K8sObject[] {
  const out = spawnSync(requireKubectl(), ['kustomize', dir], { encoding: 'utf8' });
  assert.equal(out.status, 0, `kubectl kustomize ${dir}:\n${out.stderr}`);
  return YAML.parseAllDocuments(out.stdout).map((doc) => {
    assert.deepEqual(doc.errors, [], `YAML of ${dir}`);
    return doc.toJS() as K8sObject;
  });
}

/** Where a kind's model lives: core `v1` → kubernetes-models/v1/Service; `apps/v1` → kubernetes-models/apps/v1/Deployment; KEDA's in its own package. */
function modelModule(o: K8sObject): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : [undefined, o.apiVersion];
  if (group === 'keda.sh') return `@kubernetes-models/keda/keda.sh/${version}/${o.kind}`;
  return `kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`;
}

/** Runs the model's validator (throws with the schema's complaint); undefined when valid. */
export async function validateWithModel(o: K8sObject): Promise<string | undefined> {
  const module = modelModule(o);
  let Model: new (data: unknown) => { validate(): void };
  try {
    Model = ((await import(module)) as Record<string, new (data: unknown) => { validate(): void }>)[o.kind]!;
  } catch (err) {
    return `${o.kind} ${o.apiVersion}: no schema for it (${module}: ${(err as Error).message})`;
  }
  try {
    new Model(o).validate();
    return undefined;
  } catch (err) {
    return `${o.kind}/${o.metadata.name}: ${(err as Error).message}`;
  }
}

/**
 * TypeScript's excess-property and type errors for each object typed as its
 * model's interface (`I<Kind>`), compiled in memory; [] when every object is clean.
 */
export function typeErrors(objects: readonly K8sObject[]): string[] {
  const file = path.join(REPO_ROOT, 'deploy', 'kubernetes', '__rendered_objects__.ts');
  const source = objects
    .map((o, i) => `export const o${i}: import(${JSON.stringify(modelModule(o))}).I${o.kind} = ${JSON.stringify(o, null, 1)};`)
    .join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === file ? ts.createSourceFile(name, source, languageVersion) : getSourceFile(name, languageVersion, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const line = where ? source.split('\n')[where.line]?.trim() : '';
    return `${ts.flattenDiagnosticMessageText(d.messageText, '\n')}${line ? `\n  at: ${line}` : ''}`;
  });
}

/** The value after `flag` in a container's args (`--grace 300s`), or undefined. */
export function argValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
}

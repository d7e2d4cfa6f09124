/**
 * A local GitHub for tests: every request's method and path must be an
 * operation of GitHub's published REST description (@octokit/openapi), its
 * query parameters and JSON body must validate against that operation's
 * schemas (ajv, `$ref`s resolved inside the description); a request that does
 * not is answered 404 or 422 and kept in `violations`. It answers like GitHub:
 * 201 with an id on create, 200 on update, 401 on a wrong token, and, as told,
 * a rate limit (403 with `x-ratelimit-remaining: 0` and `retry-after`) or a 5xx.
 * Check runs are kept, with their annotations appended as GitHub does.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { verify, type KeyObject } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

interface Operation {
  parameters?: Array<{ $ref?: string; name?: string; in?: string; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}
interface Description {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, { name: string; in: string; schema: unknown }> };
}

let loaded: { doc: Description; ajv: Ajv; routes: Array<{ template: string; pattern: RegExp }> } | undefined;

/** The description, loaded once per test process (13 MB). */
function description() {
  if (loaded) return loaded;
  const doc = createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as Description;
  // OpenAPI 3.0 schemas: `nullable` is ajv's own keyword; `example`, `x-github`… are not checked (strict off).
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(doc, 'gh');
  const routes = Object.keys(doc.paths).map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  loaded = { doc, ajv, routes };
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const compiled = new Map<string, ValidateFunction>();
function validator(ref: string): ValidateFunction {
  let found = compiled.get(ref);
  if (!found) compiled.set(ref, (found = description().ajv.compile({ $ref: ref })));
  return found;
}

export interface GitHubRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  status: number;
}

export interface StoredCheckRun {
  id: number;
  name: string;
  head_sha: string;
  external_id: string | null;
  status: string;
  conclusion: string | null;
  details_url: string | null;
  output: { title: string | null; summary: string | null; annotations: Array<Record<string, unknown>> };
}

export type ScriptedAnswer = 'rate-limit' | 500 | 422;

export class GitHubContractServer {
  readonly requests: GitHubRequest[] = [];
  readonly violations: string[] = [];
  readonly checkRuns: StoredCheckRun[] = [];
  /** Answers for the next check-run requests, in order, before any real work. */
  readonly script: ScriptedAnswer[] = [];
  /** The bearer token the checks API accepts. */
  token = '';
  /** The App whose JWTs are accepted, and the installation token it gets. */
  app: { id: string; publicKey: KeyObject; installationId: number; installationToken: string } | undefined;
  private server: Server | undefined;
  private nextId = 1000;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    description();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const answer = this.answer(req.method ?? 'GET', req.url ?? '/', req.headers, text);
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: text === '' ? undefined : JSON.parse(text), status: answer.status });
        res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The problems of a request against the description: [] when it is a valid call of some operation. */
  check(method: string, url: string, text: string): { template: string | null; problems: string[] } {
    const { doc, routes } = description();
    const { pathname, searchParams } = new URL(url, 'http://github.test');
    const route = routes.find((r) => r.pattern.test(pathname) && doc.paths[r.template]?.[method.toLowerCase()]);
    if (!route) return { template: null, problems: [`${method} ${pathname} is no operation of GitHub's REST API`] };
    const op = doc.paths[route.template]![method.toLowerCase()]!;
    const problems: string[] = [];
    for (const raw of op.parameters ?? []) {
      const param = raw.$ref ? doc.components.parameters[raw.$ref.split('/').pop()!]! : (raw as { name: string; in: string; schema: unknown });
      if (param.in !== 'query' || !searchParams.has(param.name)) continue;
      const value = searchParams.get(param.name)!;
      const typed = (param.schema as { type?: string }).type === 'integer' ? Number(value) : value;
      const ajv = description().ajv;
      if (!ajv.validate(param.schema as object, typed)) problems.push(`query ${param.name}=${value}: ${ajv.errorsText()}`);
    }
    for (const name of searchParams.keys()) {
      if (!(op.parameters ?? []).some((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()!]!.name : p.name) === name)) problems.push(`unknown query parameter ${name}`);
    }
    const schema = op.requestBody?.content?.['application/json']?.schema;
    if (schema) {
      const validate = validator(`gh#/${pointer('paths', route.template, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}`);
      const body = text === '' ? {} : (JSON.parse(text) as unknown);
      if (!validate(body)) problems.push(...(validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message ?? ''}`));
    } else if (text !== '') problems.push(`${method} ${route.template} takes no body`);
    return { template: route.template, problems };
  }

  private answer(method: string, url: string, headers: IncomingHttpHeaders, text: string): { status: number; body: unknown; headers?: Record<string, string> } {
    const { template, problems } = this.check(method, url, text);
    if (!template) {
      this.violations.push(problems[0]!);
      return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
    }
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    if (template.startsWith('/app/') || template === '/repos/{owner}/{repo}/installation') return this.appAnswer(template, url, bearer);
    if (!bearer || bearer !== (this.app?.installationToken ?? this.token)) return { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } };
    const annotations = ((JSON.parse(text || '{}') as { output?: { annotations?: unknown[] } }).output?.annotations ?? []).length;
    if (annotations > 50) return { status: 422, body: { message: 'Invalid request.\n\nOnly 50 annotations may be sent per request.', documentation_url: 'https://docs.github.com/rest/checks/runs' } };
    if (problems.length > 0) {
      this.violations.push(`${method} ${template}: ${problems.join('; ')}`);
      return { status: 422, body: { message: `Invalid request.\n\n${problems.join('\n')}`, documentation_url: 'https://docs.github.com/rest' } };
    }
    const scripted = this.script.shift();
    if (scripted === 'rate-limit') {
      return { status: 403, headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 1), 'retry-after': '1' }, body: { message: 'API rate limit exceeded for installation.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' } };
    }
    if (scripted === 500) return { status: 500, body: { message: 'Server Error' } };
    if (scripted === 422) return { status: 422, body: { message: 'Validation Failed', errors: [{ resource: 'CheckRun', code: 'invalid' }], documentation_url: 'https://docs.github.com/rest/checks/runs' } };
    return this.checkRunAnswer(method, template, url, JSON.parse(text || '{}') as Record<string, unknown>);
  }

  private checkRunAnswer(method: string, template: string, url: string, body: Record<string, unknown>): { status: number; body: unknown } {
    const { pathname, searchParams } = new URL(url, 'http://github.test');
    const parts = pathname.split('/');
    if (method === 'GET' && template === '/repos/{owner}/{repo}/commits/{ref}/check-runs') {
      const runs = this.checkRuns.filter((r) => r.head_sha === parts[5] && (!searchParams.has('check_name') || r.name === searchParams.get('check_name')));
      return { status: 200, body: { total_count: runs.length, check_runs: runs.map((r) => this.shown(r)) } };
    }
    const output = (body.output ?? {}) as { title?: string; summary?: string; annotations?: Array<Record<string, unknown>> };
    if (method === 'POST' && template === '/repos/{owner}/{repo}/check-runs') {
      const run: StoredCheckRun = {
        id: this.nextId++,
        name: body.name as string,
        head_sha: body.head_sha as string,
        external_id: (body.external_id as string | undefined) ?? null,
        status: body.conclusion ? 'completed' : ((body.status as string | undefined) ?? 'queued'),
        conclusion: (body.conclusion as string | undefined) ?? null,
        details_url: (body.details_url as string | undefined) ?? null,
        output: { title: output.title ?? null, summary: output.summary ?? null, annotations: [...(output.annotations ?? [])] },
      };
      this.checkRuns.push(run);
      return { status: 201, body: this.shown(run) };
    }
    if (method === 'PATCH' && template === '/repos/{owner}/{repo}/check-runs/{check_run_id}') {
      const run = this.checkRuns.find((r) => r.id === Number(parts[5]));
      if (!run) return { status: 404, body: { message: 'Not Found' } };
      if (body.conclusion) Object.assign(run, { status: 'completed', conclusion: body.conclusion });
      else if (body.status) run.status = body.status as string;
      run.output = { title: output.title ?? run.output.title, summary: output.summary ?? run.output.summary, annotations: [...run.output.annotations, ...(output.annotations ?? [])] };
      return { status: 200, body: this.shown(run) };
    }
    return { status: 404, body: { message: 'Not Found' } };
  }

  /** An App JWT, checked with its public key (RS256), gets the installation and its token. */
  private appAnswer(template: string, url: string, bearer: string | undefined): { status: number; body: unknown } {
    const app = this.app;
    const [header, payload, signature] = (bearer ?? '').split('.');
    const claims = payload ? (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss?: string; exp?: number; iat?: number }) : {};
    const signed = app && header && signature && verify('sha256', Buffer.from(`${header}.${payload}`), app.publicKey, Buffer.from(signature, 'base64url'));
    const now = Date.now() / 1000;
    if (!app || !signed || claims.iss !== app.id || !claims.exp || claims.exp < now || claims.exp - (claims.iat ?? 0) > 600) {
      return { status: 401, body: { message: 'A JSON web token could not be decoded', documentation_url: 'https://docs.github.com/rest' } };
    }
    if (template === '/repos/{owner}/{repo}/installation') return { status: 200, body: { id: app.installationId, app_id: Number(app.id) } };
    if (!url.startsWith(`/app/installations/${app.installationId}/`)) return { status: 404, body: { message: 'Not Found' } };
    return { status: 201, body: { token: app.installationToken, expires_at: new Date(Date.now() + 3_600_000).toISOString() } };
  }

  private shown(run: StoredCheckRun) {
    const { output, ...rest } = run;
    return { ...rest, output: { title: output.title, summary: output.summary, annotations_count: output.annotations.length } };
  }
}


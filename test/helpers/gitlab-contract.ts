/**
 * A local GitLab for tests: `POST /projects/:id/statuses/:sha` checked against
 * GitLab's documented fields (state one of pending, running, success, failed,
 * canceled; name; target_url; description at most 255 characters; a
 * PRIVATE-TOKEN header), answered as GitLab does: 201 with the status, 401
 * "401 Unauthorized" for a wrong token, 400 "Cannot transition status via …"
 * when the status already has that state. Anything else is kept in `violations`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const STATES = ['pending', 'running', 'success', 'failed', 'canceled'];
const TRANSITION: Record<string, string> = { pending: 'enqueue', running: 'run', success: 'succeed', failed: 'drop', canceled: 'cancel' };
const FIELDS = new Set(['state', 'ref', 'name', 'context', 'target_url', 'description', 'coverage', 'pipeline_id']);

export interface GitLabStatus {
  project: string;
  sha: string;
  state: string;
  name: string;
  target_url: string | null;
  description: string | null;
}

export class GitLabContractServer {
  readonly violations: string[] = [];
  readonly posted: Array<GitLabStatus & { status: number; token: string | undefined }> = [];
  /** Current status per project, sha and name. */
  readonly statuses = new Map<string, GitLabStatus>();
  token = '';
  private server: Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/api/v4`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { status, body } = this.answer(req.method ?? '', req.url ?? '', req.headers['private-token'] as string | undefined, Buffer.concat(chunks).toString('utf8'));
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
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

  private answer(method: string, url: string, token: string | undefined, text: string): { status: number; body: unknown } {
    const match = /^\/api\/v4\/projects\/([^/]+)\/statuses\/([0-9a-f]{7,40})$/.exec(url);
    if (method !== 'POST' || !match) {
      this.violations.push(`${method} ${url} is not POST /projects/:id/statuses/:sha`);
      return { status: 404, body: { message: '404 Not Found' } };
    }
    if (token !== this.token) return { status: 401, body: { message: '401 Unauthorized' } };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.violations.push('the body is not JSON');
      return { status: 400, body: { error: 'body is invalid' } };
    }
    const problems = Object.keys(body).filter((k) => !FIELDS.has(k)).map((k) => `unknown field ${k}`);
    if (!STATES.includes(body.state as string)) problems.push(`state does not have a valid value: ${String(body.state)}`);
    if (typeof body.name !== 'string' || body.name === '') problems.push('name is missing');
    if (typeof body.target_url !== 'string' || !/^https?:\/\//.test(body.target_url)) problems.push('target_url is not a URL');
    if (body.description !== undefined && (typeof body.description !== 'string' || body.description.length > 255)) problems.push('description is longer than 255 characters');
    if (problems.length > 0) {
      this.violations.push(...problems);
      return { status: 400, body: { error: problems.join(', ') } };
    }
    const status: GitLabStatus = { project: decodeURIComponent(match[1]!), sha: match[2]!, state: body.state as string, name: body.name as string, target_url: body.target_url as string, description: (body.description as string | undefined) ?? null };
    const key = `${status.project} ${status.sha} ${status.name}`;
    const current = this.statuses.get(key);
    if (current?.state === status.state) {
      this.posted.push({ ...status, status: 400, token });
      return { status: 400, body: { message: `Cannot transition status via :${TRANSITION[status.state]} from :${status.state} (Reason(s): Status cannot transition via "${TRANSITION[status.state]}")` } };
    }
    this.statuses.set(key, status);
    this.posted.push({ ...status, status: 201, token });
    return { status: 201, body: { id: this.posted.length, sha: status.sha, ref: null, status: status.state, name: status.name, target_url: status.target_url, description: status.description, created_at: new Date().toISOString() } };
  }
}

/**
 * The served OpenAPI document as the fuzzer uses it: its operations (method,
 * path, parameters, body schema, documented responses) and a validator of
 * response bodies against the document's own schemas.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  maxProperties?: number;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
}

export interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  /** As in the document: `/v0/test-run-sets/{id}` (the server prefix, `/api`, not included). */
  path: string;
  parameters: Parameter[];
  body: Schema | undefined;
  /** Documented statuses, each with its JSON body schema (undefined: no body). */
  responses: Map<number, Schema | undefined>;
  /** False for public operations (no `security`, or an empty one). */
  secured: boolean;
}

interface OpenApiDocument {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export class OpenApiModel {
  readonly operations: Operation[];
  readonly prefix: string;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<Schema, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    this.prefix = doc.servers?.[0]?.url ?? '';
    this.operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, raw]) => toOperation(method.toUpperCase(), path, raw)),
    );
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: 'openapi', components: doc.components ?? {} });
  }

  /** The operation at this method and concrete path, if the document has one. */
  find(method: string, path: string): Operation | undefined {
    return this.operations.find((op) => op.method === method && templateRegExp(op.path).test(path));
  }

  /** Follows `$ref: "#/components/schemas/…"`. */
  resolve(schema: Schema): Schema {
    if (schema.$ref === undefined) return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = this.doc.components?.schemas?.[name];
    if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
    return this.resolve(target);
  }

  /** Null when `body` is valid against `schema`, else what is wrong. */
  invalidity(schema: Schema, body: unknown): string | null {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema));
      this.validators.set(schema, validate);
    }
    if (validate(body)) return null;
    return this.ajv.errorsText(validate.errors);
  }
}

function toOperation(method: string, path: string, raw: RawOperation): Operation {
  const responses = new Map<number, Schema | undefined>();
  for (const [status, response] of Object.entries(raw.responses ?? {})) {
    const content = response.content ?? {};
    responses.set(Number(status), (content['application/json'] ?? content['application/problem+json'] ?? Object.values(content)[0])?.schema);
  }
  const body = raw.requestBody?.content?.['application/json']?.schema;
  return { method, path, parameters: raw.parameters ?? [], body, responses, secured: (raw.security ?? []).length > 0 };
}

function templateRegExp(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
}

/** `#/components/…` refs point into the document registered as `openapi`. */
function rebase(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')) as Schema;
}

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

export interface ServedResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  json: any;
}

/** One request through Fastify's inject (no socket). */
export async function get(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<ServedResponse> {
  const res = await app.inject({ method: method as 'GET', url, headers });
  let json: unknown;
  try {
    json = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text: res.body, json };
}

/**
 * Every object schema of `node` that names its properties made closed (`additionalProperties:
 * false`), whatever it declared: a strict validator rejects any property the document does not
 * name. Objects without `properties` (a free JSON object) are left as they are. Returns a copy.
 */
export function closeObjects<T>(node: T): T {
  if (Array.isArray(node)) return node.map(closeObjects) as T;
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = closeObjects(v);
  if (out.properties && typeof out.properties === 'object') out.additionalProperties = false;
  return out as T;
}

/** A JSON Pointer of the given keys (RFC 6901 escapes). */
const pointer = (keys: string[]) => keys.map((k) => `/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * A strict validator of answers against the OpenAPI document the API serves (ajv, JSON Schema
 * 2020-12): the status must be one the operation declares (a `default` counts), the body must
 * match the JSON schema declared for that status (a `$ref` to components/responses followed), a
 * 304 must have no body, and no object may hold a property the document does not name
 * (closeObjects: even where a schema leaves objects open).
 */
export class DocumentValidator {
  readonly #ajv: Ajv2020;
  readonly #doc: any;

  constructor(doc: any) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema(closeObjects(doc), 'openapi');
  }

  /** The errors of `body` answered with `status` by (method, path); [] when valid. */
  check(path: string, status: number, body: unknown, method = 'get'): string[] {
    const op = this.#doc.paths[path]?.[method];
    // a path the document does not describe (an unknown route) gets the API's Error body
    if (!op && status >= 400) return this.#validate(['components', 'schemas', 'Error'], body);
    if (!op) return [`no operation ${method.toUpperCase()} ${path}`];
    const key = op.responses[String(status)] !== undefined ? String(status) : 'default';
    let response = op.responses[key];
    let at = ['paths', path, method, 'responses', key];
    if (response === undefined) return [`${method.toUpperCase()} ${path} does not declare status ${status}`];
    if (typeof response.$ref === 'string') {
      at = (response.$ref as string).slice(2).split('/');
      response = at.reduce((n: any, k) => n?.[k], this.#doc);
    }
    if (status === 304) return body === undefined ? [] : ['a 304 has a body'];
    if (!response?.content?.['application/json']?.schema) return [`no JSON schema for ${path} ${status}`];
    return this.#validate([...at, 'content', 'application/json', 'schema'], body);
  }

  #validate(at: string[], body: unknown): string[] {
    const validate = this.#ajv.getSchema(`openapi#${pointer(at)}`);
    if (!validate) return [`schema ${pointer(at)} not found`];
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }

  /** The statuses (method, path) declares, as numbers (without `default`). */
  statuses(path: string, method = 'get'): number[] {
    return Object.keys(this.#doc.paths[path]?.[method]?.responses ?? {})
      .filter((k) => k !== 'default')
      .map(Number);
  }
}

/** The OpenAPI path template a concrete URL belongs to. */
export function templateOf(url: string): string {
  const path = url.split('?')[0]!;
  return path
    .replace(
      /^\/api\/v1\/sellers\/[^/]+(\/payments|\/periods)?$/,
      (_m, p: string | undefined) => `/api/v1/sellers/{slug}${p ?? ''}`,
    )
    .replace(/^\/api\/v1\/operators\/[^/]+$/, '/api/v1/operators/{id}');
}

/**
 * A small RFC 4180 reader for the CSV tests, written independently of csv-stringify: quoted fields
 * (with `""` for a quote, and commas and line breaks inside), CRLF or LF line ends.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

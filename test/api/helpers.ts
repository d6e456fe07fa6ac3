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
 * Validates bodies against the OpenAPI document the API serves (ajv, JSON Schema 2020-12):
 * the 200 schema of an operation, or the Error schema for an error status.
 */
export class DocumentValidator {
  readonly #ajv: Ajv2020;
  readonly #doc: any;

  constructor(doc: any) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc, 'openapi');
  }

  /** The errors of `body` against the response schema of (path, status); [] when valid. */
  check(path: string, status: number, body: unknown): string[] {
    let ref: string;
    if (status >= 400) ref = '#/components/schemas/Error';
    else {
      const op = this.#doc.paths[path]?.get;
      if (!op) return [`no operation for ${path}`];
      ref = op.responses[String(status)]?.content?.['application/json']?.schema?.$ref;
      if (!ref) return [`no JSON schema for ${path} ${status}`];
    }
    const validate = this.#ajv.getSchema(`openapi${ref}`);
    if (!validate) return [`schema ${ref} not found`];
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
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

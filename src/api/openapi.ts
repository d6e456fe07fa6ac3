import { z } from 'zod';
import { BUNDLE_FILE_NAMES } from '../publish/export.ts';
import { ENDPOINTS, BASE, type Endpoint } from './endpoints.ts';
import { ALLOWED_METHODS, ERROR_CODES } from './errors.ts';
import { components } from './schemas/common.ts';
import { meaningOf } from './schemas/descriptions.ts';

type Json = Record<string, unknown>;

// bigint (money, block numbers) is written as a bare JSON integer (./json.ts).
// Integer literals (farm_flag 0 | 1) are integers, not just numbers.
const override = (ctx: { zodSchema: unknown; jsonSchema: Json }) => {
  const def = (ctx.zodSchema as { _zod: { def: { type: string; values?: unknown[] } } })._zod.def;
  if (def.type === 'bigint') {
    ctx.jsonSchema.type = 'integer';
    ctx.jsonSchema.minimum = 0;
  }
  if (def.type === 'literal' && def.values?.every((v) => Number.isInteger(v))) ctx.jsonSchema.type = 'integer';
};

function strip(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function componentSchemas(): Record<string, Json> {
  const out = z.toJSONSchema(components, {
    uri: (id) => `#/components/schemas/${id}`,
    io: 'output',
    unrepresentable: 'any',
    override,
  }) as { schemas: Record<string, Json> };
  return Object.fromEntries(Object.entries(out.schemas).map(([id, s]) => [id, describeProperties(strip(s), id)]));
}

/**
 * Gives every property its meaning (schemas/descriptions.ts), ahead of the format the schema
 * states: e.g. `tier`: "verified: …; listed_only: … (one of verified, listed_only)".
 */
function describeProperties(schema: Json, path: string): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (properties) {
    for (const [name, property] of Object.entries(properties)) {
      const meaning = meaningOf(`${path}.${name}`);
      const format = typeof property.description === 'string' ? property.description : undefined;
      if (meaning) property.description = format && !meaning.includes(format) ? `${meaning} (${format})` : meaning;
      describeProperties(property, `${path}.${name}`);
    }
  }
  if (schema.items && typeof schema.items === 'object') describeProperties(schema.items as Json, path);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key] as Json[] | undefined;
    list?.forEach((s) => describeProperties(s, path));
  }
  return schema;
}

/**
 * The JSON Schema of one zod schema of the API, inlined, as this document writes it (bigint as
 * integer). The MCP server (src/mcp) describes its tools' inputs and outputs with it.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'output'): Json {
  return strip(z.toJSONSchema(schema, { io, unrepresentable: 'any', override }) as Json);
}

function parameterSchema(schema: z.ZodType): Json {
  return jsonSchemaOf(schema);
}

function parameters(e: Endpoint): Json[] {
  const out: Json[] = [];
  for (const [name, s] of Object.entries(e.params?.shape ?? {})) {
    const schema = parameterSchema(s as z.ZodType);
    const { description, ...rest } = schema;
    out.push({
      name,
      in: 'path',
      required: true,
      description,
      schema: { ...rest, type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
    });
  }
  for (const [name, s] of Object.entries(e.query.shape)) {
    const schema = parameterSchema(s as z.ZodType);
    const { description, ...rest } = schema;
    out.push({ name, in: 'query', required: false, description, schema: rest });
  }
  return out;
}

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

const HEADERS = {
  ETag: header('strong validator of (generation, URL); send it back in If-None-Match to get a 304'),
  CacheControl: header('public, max-age=<seconds until the next expected run, at most the cadence>'),
  RetryAfter: header('seconds to wait before trying again', { type: 'integer', minimum: 0 }),
  Allow: header(`the methods the path takes: ${ALLOWED_METHODS}`),
};

const errorResponse = (status: number, description: string, extra: Json = {}) => ({
  description: `${description} Codes: ${(ERROR_CODES[status] ?? []).join(', ')}.`,
  ...extra,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const RESPONSES: Record<string, Json> = {
  BadRequest: errorResponse(400, 'A parameter is malformed, out of range, repeated or unknown; the message names it.'),
  MethodNotAllowed: errorResponse(405, 'A method other than GET, HEAD or OPTIONS: this API is read-only.', {
    headers: { Allow: { $ref: '#/components/headers/Allow' } },
  }),
  UriTooLong: errorResponse(414, 'The URL is longer than 2048 characters.'),
  TooManyRequests: errorResponse(429, 'Per-client rate limit exceeded.', {
    headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
  }),
  InternalError: errorResponse(500, 'Unexpected failure; the body never carries internals.'),
  Unavailable: errorResponse(
    503,
    'Nothing published yet (no_generation) or the database is unreachable (unavailable).',
    {
      headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
    },
  ),
};

const commonErrors = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '405': { $ref: '#/components/responses/MethodNotAllowed' },
  '414': { $ref: '#/components/responses/UriTooLong' },
  '429': { $ref: '#/components/responses/TooManyRequests' },
  '500': { $ref: '#/components/responses/InternalError' },
  '503': { $ref: '#/components/responses/Unavailable' },
};

const okHeaders = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Cache-Control': { $ref: '#/components/headers/CacheControl' },
};

function operation(e: Endpoint): Json {
  return {
    operationId: e.operationId,
    summary: e.summary,
    description: e.description,
    tags: ['snapshot'],
    parameters: [
      ...parameters(e),
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'an ETag of an earlier response',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: e.csv
          ? 'OK. With format=csv (or Accept: text/csv): every row of the generation as CSV, with a header line.'
          : 'OK',
        headers: okHeaders,
        content: {
          'application/json': { schema: { $ref: `#/components/schemas/${e.responseId}` } },
          ...(e.csv ? { 'text/csv': { schema: { type: 'string' } } } : {}),
        },
      },
      '304': { description: 'Not modified: If-None-Match matched the ETag.', headers: okHeaders },
      ...commonErrors,
      '404': {
        description: `No such route (not_found) or ${e.notFound.map((c) => `\`${c}\``).join(' / ')}.`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  };
}

const DESCRIPTION = [
  'Read-only API of x402-tally: verified 30-day revenue of x402 Bazaar sellers, recomputed from Base USDC settlements and published as immutable, numbered generations.',
  '',
  'Every snapshot endpoint serves the latest published generation, or the one pinned by `?generation=N` (404 generation_not_found when it is not retained).',
  `Methods: GET and HEAD (OPTIONS for CORS preflight); any other method on a known path is a 405 (code method_not_allowed, the Error body) with the header \`Allow: ${ALLOWED_METHODS}\`.`,
  'Errors are `{"error":{"code","message"}}`. Money fields end in `_micro` and are exact JSON integers of micro-USDC (they may exceed 2^53 - 1: parse them with a big-integer-aware JSON reader).',
].join('\n');

let cached: Json | undefined;

/** The OpenAPI 3.1.0 document of the API (info.version 1.0.0), built once from the zod schemas. */
export function openApiDocument(): Json {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'x402-tally API',
      version: '1.0.0',
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'this server' }],
    security: [],
    tags: [
      { name: 'snapshot', description: 'Data of one published generation' },
      { name: 'documentation', description: 'This document and its rendering' },
    ],
    paths: {
      ...Object.fromEntries(ENDPOINTS.map((e) => [e.path, { get: operation(e) }])),
      [`${BASE}/openapi.json`]: {
        get: {
          operationId: 'getOpenApi',
          summary: 'This OpenAPI 3.1.0 document',
          tags: ['documentation'],
          responses: {
            '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
            '400': { $ref: '#/components/responses/BadRequest' },
            '405': { $ref: '#/components/responses/MethodNotAllowed' },
            '429': { $ref: '#/components/responses/TooManyRequests' },
          },
        },
      },
      [`${BASE}/generations/{generation}/bundle/{file}`]: {
        get: {
          operationId: 'getBundleFile',
          summary: 'A file of the audit bundle of a retained generation',
          description:
            'manifest.json and each NDJSON file it lists, byte for byte what `x402-tally export` writes. Download them into a folder ' +
            'and run `x402-tally audit --bundle DIR` to recompute every number from the chain (docs/operations.md, "Audit"). ' +
            'A file is streamed from the database page by page. The ETag is the sha256 of the file (the value the manifest lists), ' +
            "so If-None-Match answers 304; HEAD answers the headers without reading the file. The first request for a generation's " +
            'files builds the digests of its bundle once (concurrent requests wait for that one build) and stores them.',
          tags: ['snapshot'],
          parameters: [
            {
              name: 'generation',
              in: 'path',
              required: true,
              description: 'a retained published generation',
              schema: { type: 'integer', minimum: 1, maximum: 2147483647 },
            },
            {
              name: 'file',
              in: 'path',
              required: true,
              description: 'the file of the bundle',
              schema: { type: 'string', enum: [...BUNDLE_FILE_NAMES] },
            },
          ],
          responses: {
            '200': {
              description:
                'The file; immutable (Cache-Control: public, max-age=31536000, immutable). ETag: the sha256 of the file in quotes. ' +
                'Content-Length: its size, unless the response is compressed.',
              content: {
                'application/json': { schema: { type: 'object' } },
                'application/x-ndjson': { schema: { type: 'string' } },
              },
            },
            '304': { description: 'Not modified: If-None-Match matched the ETag (the file is the one you hold).' },
            '400': { $ref: '#/components/responses/BadRequest' },
            '405': { $ref: '#/components/responses/MethodNotAllowed' },
            '404': {
              description: 'No such file (not_found) or generation_not_found.',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
            '429': { $ref: '#/components/responses/TooManyRequests' },
            '500': { $ref: '#/components/responses/InternalError' },
            '503': { $ref: '#/components/responses/Unavailable' },
          },
        },
      },
      [`${BASE}/docs`]: {
        get: {
          operationId: 'getDocs',
          summary: 'Human-readable rendering of this document',
          tags: ['documentation'],
          responses: {
            '200': { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
            '400': { $ref: '#/components/responses/BadRequest' },
            '405': { $ref: '#/components/responses/MethodNotAllowed' },
            '429': { $ref: '#/components/responses/TooManyRequests' },
          },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      responses: RESPONSES,
      headers: HEADERS,
    },
  };
  return cached;
}

import { TallyError } from '../lib/errors.ts';

/**
 * API errors: every failure leaves as `{"error":{"code","message"}}` with a snake_case code and
 * a human message that says what was wrong (for a 400: which parameter and why). Internal
 * failures never carry their own text: no stack, SQL, file path or RPC URL reaches a client.
 */
export class ApiError extends TallyError {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 400 for one query or path parameter: the message names it. */
export function badParameter(name: string, why: string, code = parameterCode(name)): ApiError {
  return new ApiError(400, code, `${name}: ${why}`);
}

/** The 400 code of a malformed parameter: its own for the slug and the cursor. */
export function parameterCode(name: string): string {
  return name === 'slug' ? 'invalid_slug' : name === 'cursor' ? 'invalid_cursor' : 'invalid_parameter';
}

export function generationNotFound(generation: number): ApiError {
  return new ApiError(
    404,
    'generation_not_found',
    `generation ${generation} is not a retained published generation; see /api/v1/meta for the retained ones`,
  );
}

export function noGeneration(): ApiError {
  return new ApiError(503, 'no_generation', 'no generation has been published yet; try again after the first run', {
    'retry-after': '60',
  });
}

export function sellerNotFound(slug: string): ApiError {
  return new ApiError(404, 'seller_not_found', `${slug} is not a seller of this generation`);
}

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

/** The JSON body of an error. */
export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The codes the API may answer with, per status: the OpenAPI document lists them. */
export const ERROR_CODES: Record<number, readonly string[]> = {
  400: ['invalid_parameter', 'unknown_parameter', 'invalid_cursor', 'invalid_slug', 'bad_request'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  431: ['request_too_large'],
  404: ['not_found', 'generation_not_found', 'seller_not_found', 'operator_not_found'],
  405: ['method_not_allowed'],
  414: ['uri_too_long'],
  429: ['rate_limited'],
  500: ['internal_error'],
  503: ['no_generation', 'unavailable', 'starting'],
};

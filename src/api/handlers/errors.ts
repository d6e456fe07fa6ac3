import type { FastifyError, FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isTemporary } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { isKnownPath } from '../endpoints.ts';
import { ALLOWED_METHODS, ApiError, errorBody } from '../errors.ts';

/** Longest URL (path + query) served; longer ones get a 414. */
export const MAX_URL_LENGTH = 2048;

// Codes for errors raised by Fastify itself (bad URL encoding, bodies, ...), by status.
const FRAMEWORK_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * Every error leaves in the contract's shape. ApiErrors carry their own status and text; other
 * client errors (from Fastify) get a fixed text per status; anything else is a 500 (or a 503 when
 * the database is unreachable) whose body says nothing about the cause, which goes to the log.
 */
export function installErrorHandlers(app: FastifyInstance, log: Logger): void {
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      throw new ApiError(400, 'bad_request', 'an HTTP/1.1 request needs a Host header');
    }
    if (request.url.length > MAX_URL_LENGTH) {
      throw new ApiError(414, 'uri_too_long', `the URL is longer than ${MAX_URL_LENGTH} characters`);
    }
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    reply.header('cache-control', 'no-store');
    if (error instanceof ApiError) {
      return reply
        .code(error.statusCode)
        .headers(error.headers)
        .type('application/json; charset=utf-8')
        .send(errorBody(error.code, error.message));
    }
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) {
      const code = FRAMEWORK_CODES[status] ?? 'bad_request';
      return reply
        .code(status)
        .type('application/json; charset=utf-8')
        .send(errorBody(code, `the request could not be read (${code.replace(/_/g, ' ')})`));
    }
    if (isTemporary(error)) {
      log.warn({ err: error, url: request.url }, 'database unavailable');
      return reply
        .code(503)
        .header('retry-after', '5')
        .type('application/json; charset=utf-8')
        .send(errorBody('unavailable', 'the database is not reachable right now; try again shortly'));
    }
    log.error({ err: error, url: request.url }, 'request failed');
    return reply
      .code(500)
      .type('application/json; charset=utf-8')
      .send(errorBody('internal_error', 'internal error; it has been logged'));
  });

  app.setNotFoundHandler({ preHandler: app.rateLimit ? app.rateLimit() : undefined }, (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '';
    reply.header('cache-control', 'no-store').type('application/json; charset=utf-8');
    if (isKnownPath(pathname) && request.method !== 'GET' && request.method !== 'HEAD') {
      return reply
        .code(405)
        .header('allow', ALLOWED_METHODS)
        .send(
          errorBody(
            'method_not_allowed',
            `${request.method} is not allowed; this API is read-only (${ALLOWED_METHODS})`,
          ),
        );
    }
    return reply
      .code(404)
      .send(
        errorBody('not_found', `no resource ${request.method} ${pathname.slice(0, 200)}; see /api/v1/openapi.json`),
      );
  });
}

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (a request line or headers over
 * the size limit, malformed HTTP): answered in the same error shape, then the socket is closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  if (tooLarge)
    answerOnSocket(
      socket,
      431,
      'Request Header Fields Too Large',
      'request_too_large',
      'the request line or headers are too large',
    );
  else answerOnSocket(socket, 400, 'Bad Request', 'bad_request', 'malformed HTTP request');
}

/** Writes one error answer straight on a socket (no request object to answer through), then closes it. */
export function answerOnSocket(
  socket: Duplex,
  status: number,
  reason: string,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (!socket.writable) return;
  const body = errorBody(code, message);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${extra}` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

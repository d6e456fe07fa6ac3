import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectRoot } from '../lib/paths.ts';

const require = createRequire(import.meta.url);

/** A file served as is, read once at start: its body and content type. */
interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function asset(file: string): Asset {
  return { body: readFileSync(file), type: TYPES[path.extname(file)] ?? 'application/octet-stream' };
}

/**
 * Redoc's bundle shows a "by Redocly" logo loaded from cdn.redoc.ly, its one remote URL (checked
 * with grep on redoc 2.5.4): the docs page must make no request to another origin, so the logo is
 * replaced by an empty inline image.
 */
function withoutRemoteLogo(file: Asset): Asset {
  const empty = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';
  return {
    ...file,
    body: Buffer.from(file.body.toString('utf8').replaceAll('https://cdn.redoc.ly/redoc/logo-mini.svg', empty)),
  };
}

/** The web page's files (web/) and the libraries it and the docs page load, by URL path (endpoints.ts lists them too). */
type WebPath =
  | '/'
  | '/web/app.js'
  | '/web/style.css'
  | '/vendor/uplot.esm.js'
  | '/vendor/uplot.min.css'
  | '/vendor/redoc.standalone.js';

/**
 * The web page for people at `/` (web/index.html, web/app.js, web/style.css): plain HTML and ES
 * modules, no build step, reading only the public API of this origin. The chart library (uPlot)
 * and the docs page's renderer (Redoc) are served from their npm packages by this server: no
 * page makes a request to another origin.
 */
export function registerWebRoutes(app: FastifyInstance): void {
  const web = path.join(projectRoot, 'web');
  const files: Record<WebPath, Asset> = {
    '/': asset(path.join(web, 'index.html')),
    '/web/app.js': asset(path.join(web, 'app.js')),
    '/web/style.css': asset(path.join(web, 'style.css')),
    '/vendor/uplot.esm.js': asset(require.resolve('uplot/dist/uPlot.esm.js')),
    '/vendor/uplot.min.css': asset(require.resolve('uplot/dist/uPlot.min.css')),
    '/vendor/redoc.standalone.js': withoutRemoteLogo(asset(require.resolve('redoc/bundles/redoc.standalone.js'))),
  };
  for (const [url, file] of Object.entries(files)) {
    // The page takes query parameters of its own (?generation, ?seller, ?category): not rejected here.
    app.get(url, async (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .header('cache-control', url === '/' ? 'no-cache' : 'public, max-age=3600')
        .type(file.type)
        .send(file.body),
    );
  }
}

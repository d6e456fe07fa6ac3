import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectRoot } from '../lib/paths.ts';
import { GLOSSARY } from './glossary.ts';

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

/** The libraries the page and the docs page load, by URL path (endpoints.ts lists them too). */
type VendorPath = '/vendor/uplot.esm.js' | '/vendor/uplot.min.css' | '/vendor/redoc.standalone.js';

/** The page's own files: every .js and .css of web/, at /web/NAME (endpoints.ts: `/web/{file}`). */
function webFiles(web: string): Record<string, Asset> {
  const files: Record<string, Asset> = {};
  for (const name of readdirSync(web).sort())
    if (/^[a-z0-9-]+\.(js|css)$/.test(name)) files[`/web/${name}`] = asset(path.join(web, name));
  return files;
}

/**
 * The web page for people at `/` (web/index.html and the ES modules and style sheet of web/):
 * plain HTML and ES modules, no build step, the labels' meanings from src/api/glossary.ts, reading only the public API of this origin. The chart library (uPlot)
 * and the docs page's renderer (Redoc) are served from their npm packages by this server: no
 * page makes a request to another origin.
 */
export function registerWebRoutes(app: FastifyInstance): void {
  const web = path.join(projectRoot, 'web');
  const vendor: Record<VendorPath, Asset> = {
    '/vendor/uplot.esm.js': asset(require.resolve('uplot/dist/uPlot.esm.js')),
    '/vendor/uplot.min.css': asset(require.resolve('uplot/dist/uPlot.min.css')),
    '/vendor/redoc.standalone.js': withoutRemoteLogo(asset(require.resolve('redoc/bundles/redoc.standalone.js'))),
  };
  const files: Record<string, Asset> = {
    '/': asset(path.join(web, 'index.html')),
    ...webFiles(web),
    // The labels' meanings (src/api/glossary.ts), one text for the page and for MCP.
    '/web/glossary.json': { body: Buffer.from(JSON.stringify(GLOSSARY)), type: 'application/json; charset=utf-8' },
    ...vendor,
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

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { redactUrl } from '../lib/redact.ts';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { buildCatalog } from './build.ts';
import { getJsonWithRetry, type RetryOptions } from './http.ts';
import type { Catalog, CatalogOptions } from './types.ts';

const PageSchema = z.looseObject({
  items: z.array(z.unknown()),
  pagination: z
    .looseObject({ limit: z.number().nullish(), offset: z.number().nullish(), total: z.number().nullish() })
    .nullish(),
});
const CrawlSchema = z.looseObject({
  resources: z.array(z.unknown()),
  total: z.number().nullish(),
  partial: z.boolean().nullish(),
});

/** What a JSON document of a catalog holds: its items and, when it says so, the catalog's total. */
export interface CatalogDocument {
  items: unknown[];
  total: number | null;
  /** The offset a discovery page says it starts at, when it says so. */
  offset: number | null;
  /** The page size a discovery page says it used (a server may cap what was asked), when it says so. */
  limit: number | null;
  /** True when the document says it is an incomplete crawl. */
  partial: boolean;
}

/**
 * Reads the items out of a catalog document: a discovery page `{items, pagination}`, a crawl
 * wrapper `{resources, total, partial}`, or a bare array of items. Null when it is none of these.
 */
export function parseCatalogDocument(json: unknown): CatalogDocument | null {
  if (Array.isArray(json)) return { items: json, total: null, offset: null, limit: null, partial: false };
  const page = PageSchema.safeParse(json);
  if (page.success) {
    const { items, pagination } = page.data;
    return {
      items,
      total: pagination?.total ?? null,
      offset: pagination?.offset ?? null,
      limit: pagination?.limit ?? null,
      partial: false,
    };
  }
  const crawl = CrawlSchema.safeParse(json);
  if (crawl.success) {
    const { resources, total } = crawl.data;
    return { items: resources, total: total ?? null, offset: null, limit: null, partial: crawl.data.partial === true };
  }
  return null;
}

export type ReadCatalogOptions = CatalogOptions &
  RetryOptions & {
    log?: Logger;
    /** Items per page asked of a discovery endpoint, 1..1000 (default 1000, the CDP maximum). */
    pageSize?: number;
  };

/**
 * Reads a whole catalog from a discovery endpoint (http/https URL, paged with limit/offset) or a
 * JSON file, and builds its listings. A URL that stays unreachable, or whose pages do not add up
 * to the total it announces, throws TemporaryError (exit 75): a half-read catalog is never
 * returned. Read-only; safe to re-run.
 */
export async function readCatalog(source: string, options: ReadCatalogOptions): Promise<Catalog> {
  const log = options.log ?? silentLogger;
  const fetchedAt = new Date();
  const isUrl = /^https?:\/\//i.test(source);
  const items = isUrl ? await readPages(source, options) : await readFileItems(source, log);
  const shown = isUrl ? redactUrl(source) : path.basename(source);
  const catalog = buildCatalog(items, { source: shown, fetchedAt }, options);
  log.info(
    {
      source: shown,
      items: items.length,
      listings: catalog.listings.length,
      rejected: catalog.rejects.length,
      duplicates: catalog.duplicates.length,
      sha256: catalog.sha256,
    },
    'catalog read',
  );
  return catalog;
}

async function readFileItems(file: string, log: Logger): Promise<unknown[]> {
  const name = path.basename(file);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new TallyError(`cannot read catalog file ${name}: not a readable JSON file`, {
      details: { file: name },
      cause: error,
    });
  }
  const doc = parseCatalogDocument(json);
  if (!doc) {
    throw new TallyError(
      `catalog file ${name} is not a discovery page, a crawl wrapper {resources} or an array of items`,
      {
        details: { file: name },
      },
    );
  }
  if (doc.partial) {
    throw new TallyError(`catalog file ${name} is marked partial: it is not a whole catalog`, {
      details: { file: name },
    });
  }
  if (doc.total !== null && doc.total !== doc.items.length) {
    // One page saved to a file is a legitimate input; say that it is not the whole catalog.
    log.warn({ file: name, items: doc.items.length, total: doc.total }, 'catalog file holds part of the catalog');
  }
  return doc.items;
}

// Guard against an endpoint whose pagination never ends (10 million items at 1000 per page).
const MAX_PAGES = 10_000;

async function readPages(source: string, options: ReadCatalogOptions): Promise<unknown[]> {
  const log = options.log ?? silentLogger;
  const pageSize = Math.min(1000, Math.max(1, Math.trunc(options.pageSize ?? 1000)));
  const shown = redactUrl(source);
  const items: unknown[] = [];
  let total: number | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL(source);
    url.searchParams.set('limit', String(pageSize));
    url.searchParams.set('offset', String(items.length));
    const json = await getJsonWithRetry(url.toString(), { ...options, log });
    const doc = parseCatalogDocument(json);
    if (!doc || Array.isArray(json)) {
      throw new TallyError(`catalog source ${shown} did not answer a discovery page {items, pagination}`, {
        details: { source: shown, offset: items.length },
      });
    }
    if (doc.offset !== null && doc.offset !== items.length) {
      // An endpoint that ignores offset would hand back the first page again and again.
      throw new TallyError(`catalog source ${shown} answered offset ${doc.offset} when asked for ${items.length}`, {
        details: { source: shown, asked: items.length, answered: doc.offset },
      });
    }
    items.push(...doc.items);
    total = doc.total;
    log.debug(
      { source: shown, offset: items.length - doc.items.length, items: doc.items.length, total },
      'catalog page',
    );
    // Without a total, a short page is the last one; "short" against the limit the server says it
    // applied, since it may cap the one asked for.
    const done =
      total !== null
        ? items.length >= total || doc.items.length === 0
        : doc.items.length < (doc.limit ?? pageSize) || doc.items.length === 0;
    if (done) {
      if (total !== null && items.length !== total) {
        // The catalog changed between pages (items shifted in or out): what we hold is not one
        // consistent catalog, so the run is retried later rather than built on it.
        throw new TemporaryError(
          `catalog source ${shown} changed while it was read (${items.length} items read, ${total} announced); run again later`,
          {
            details: { source: shown, read: items.length, total },
          },
        );
      }
      return items;
    }
  }
  throw new TallyError(`catalog source ${shown} did not finish within ${MAX_PAGES} pages`, {
    details: { source: shown },
  });
}

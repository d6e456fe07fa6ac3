import path from 'node:path';
import { TallyError } from '../lib/errors.ts';
import { writeJson } from '../lib/json.ts';
import { METHOD_VERSIONS, methodVersion } from '../method/versions.ts';
import {
  compareGenerationRows,
  compareSellerRows,
  formatDifference,
  readBundle,
  readGenerationRows,
  type GenerationRows,
} from '../publish/index.ts';
import { parseGeneration, UsageError } from './args.ts';
import { recomputeGeneration } from './audit/recompute.ts';
import type { CommandContext } from './context.ts';
import { cycleDeps } from './run.ts';
import { openStore } from './store.ts';

interface Published {
  rows: GenerationRows;
  from: string;
  /** Bundle files changed after export (sha256 or row count differs from the manifest). */
  integrity: string[];
}

async function loadPublished(ctx: CommandContext): Promise<Published> {
  if (ctx.args.bundle !== undefined) {
    if (ctx.args.generation !== undefined) throw new UsageError('give --generation N or --bundle DIR, not both');
    const dir = path.resolve(ctx.args.bundle);
    const bundle = await readBundle(dir);
    return { rows: bundle.rows, from: `bundle ${dir}`, integrity: bundle.integrity };
  }
  const generation = parseGeneration(ctx.args.generation);
  const database = await openStore(ctx.config, { readOnly: true });
  try {
    return { rows: await readGenerationRows(database.db, generation), from: 'the database', integrity: [] };
  } finally {
    await database.close();
  }
}

/** `--seller 0x...`: a seller address of the generation (lowercased), or a usage error. */
function sellerOf(value: string | undefined, rows: GenerationRows): string | undefined {
  if (value === undefined) return undefined;
  if (!/^0x[0-9a-fA-F]{40}$/.test(value))
    throw new UsageError(`--seller must be 0x and 40 hex digits, got ${JSON.stringify(value)}`);
  const seller = value.toLowerCase();
  if (!rows.sellers.some((s) => s.seller_address === seller)) {
    throw new UsageError(`--seller ${seller} is not a seller of generation ${rows.generation.generation}`);
  }
  return seller;
}

/**
 * `x402-tally audit --generation N | --bundle DIR [--seller 0x...]`: recomputes the generation from raw chain data
 * in a scratch embedded database (never ours) and prints every difference, one per line. Exit 0
 * identical, 1 differences (or a method version this code does not implement), 75 temporary
 * (RPC unreachable). Safe to re-run; writes nothing. With --seller, only that seller's logs are
 * read and only its rows compared (its periods first, naming the first that differs).
 */
export async function auditCommand(ctx: CommandContext): Promise<number> {
  if (ctx.args.bundle === undefined && ctx.args.generation === undefined) {
    throw new UsageError('audit needs --generation N (from the database) or --bundle DIR (an exported bundle)');
  }
  if (ctx.config.RPC_URL.length === 0) throw new TallyError('RPC_URL is required for audit (set --rpc-url or RPC_URL)');
  const { rows, from, integrity } = await loadPublished(ctx);
  const g = rows.generation;
  if (!Object.hasOwn(METHOD_VERSIONS, g.method_version)) {
    const known = Object.keys(METHOD_VERSIONS).join(', ');
    ctx.out(
      `generation ${g.generation} was computed with method ${g.method_version}; this x402-tally implements ` +
        `methods ${known}. Audit it with an x402-tally release of method ${g.method_version} (docs/METHOD.md changelog).`,
    );
    ctx.out(
      verdict(
        `generation ${g.generation} NOT AUDITED: method ${g.method_version} is not one this x402-tally implements`,
      ),
    );
    return 1;
  }
  const seller = sellerOf(ctx.args.seller, rows);
  const what = seller === undefined ? '' : ` seller ${seller} (its own logs only)`;
  ctx.out(
    `auditing generation ${g.generation}${what} from ${from}: as of block ${g.as_of.block_number}, method ${g.method_version}`,
  );
  for (const problem of integrity) ctx.out(`bundle file ${problem}`);
  const foreign = foreignConstants(g.method_version, g.constants);
  if (foreign.length > 0) {
    ctx.out(`the published constants are not those method ${g.method_version} defines: ${foreign.join('; ')}`);
    integrity.push(...foreign);
  }
  ctx.progress?.(`recomputing generation ${g.generation} from the chain…`);
  const recomputed = await recomputeGeneration(rows, ctx.config, cycleDeps(ctx), ctx.log, {
    ...(seller === undefined ? {} : { seller }),
    ...(ctx.progress ? { progress: ctx.progress } : {}),
  });
  ctx.progress?.('comparing…');
  const differences =
    seller === undefined ? compareGenerationRows(rows, recomputed) : compareSellerRows(rows, recomputed, seller);
  const paymentsOf =
    seller === undefined ? rows.payments.length : rows.payments.filter((p) => p.seller_address === seller).length;
  const counts =
    seller === undefined
      ? `${paymentsOf} payments, ${rows.sellers.length} sellers, ${rows.listings.length} listings, ${rows.marketDaily.length} market days`
      : `generation ${g.generation}, ${paymentsOf} payments`;
  // The whole wait a person had, start-up included (performance.now() counts from the process start).
  const seconds = (performance.now() / 1000).toFixed(1);
  ctx.log.info(
    {
      generation: g.generation,
      differences: differences.length,
      integrity: integrity.length,
      ms: Math.round(performance.now()),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    },
    'audit done',
  );
  if (differences.length === 0 && integrity.length === 0) {
    const subject =
      seller === undefined
        ? `every digest and number of generation ${g.generation}`
        : `seller ${seller}'s digests and numbers`;
    ctx.out(verdict(`identical: ${subject} recomputed from the chain (${counts}) in ${seconds} s`));
    return 0;
  }
  for (const d of differences) ctx.out(formatDifference(d));
  const differing = seller === undefined ? `generation ${g.generation}` : `seller ${seller}`;
  ctx.out(
    verdict(
      `${differing} DIFFERS: ${differences.length} difference(s), ${integrity.length} bundle integrity problem(s) ` +
        `(${counts}) in ${seconds} s`,
    ),
  );
  return 1;
}

/** The audit's last line, and the only one that starts `audit: `: its verdict. */
export function verdict(text: string): string {
  return `audit: ${text}`;
}

/** The constants of a published generation that its method version does not define (src/method/versions.ts), said for a person. */
function foreignConstants(version: string, constants: unknown): string[] {
  const defined = methodVersion(version).constants;
  const given = (constants ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (v === undefined ? '(absent)' : writeJson(v));
  return [...new Set([...Object.keys(defined), ...Object.keys(given)])]
    .sort()
    .filter((key) => text(defined[key]) !== text(given[key]))
    .map((key) => `${key} is ${text(given[key])}, method ${version} defines ${text(defined[key])}`);
}

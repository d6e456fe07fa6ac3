import { Cron } from 'croner';
import { z } from 'zod';
import { redactUrl } from '../lib/redact.ts';

/** Base mainnet chain id and USDC contract: the defaults the method is defined on. */
export const BASE_CHAIN_ID = 8453;
export const BASE_USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
/**
 * The block the sync reads the batch-settlement contract's `ChannelCreated` logs from on Base
 * mainnet (docs/METHOD.md, "Method 3.0.0"). The contract's exact deployment block was not found
 * in a public source (2026-11-27); this is a lower bound instead: Base block 40218126 is about
 * 2026-01-01T00:00Z (genesis 2023-06-15T00:35:47Z, one block per 2 s), before any public trace of
 * the batch-settlement scheme (its blog post: x402 pull request #2277, 2026-05-12). Reading from
 * below the deployment costs only empty eth_getLogs over ~14M blocks, once.
 */
export const BASE_BATCH_SETTLEMENT_FROM_BLOCK = 40_218_126n;
/**
 * funding_lookback_seconds of method 3.0.0 (SPEC "External revenue"): how much further back than
 * the window the sellers' outgoing transfers are held. Here because the sync (which reads them)
 * and the prune (which drops them) both need it, and neither may import the method.
 */
export const FUNDING_LOOKBACK_SECONDS = 2_592_000;
/**
 * The batch contract's deployment block as docs/METHOD.md and /meta state it (SPEC "Coverage"):
 * the lower bound above, which the sync reads `ChannelCreated` from on Base. /meta serves the value
 * a 3.0.0 generation recorded in its constants (`batch_settlement_deployment_block`), or this one
 * when it recorded none.
 */
export const BATCH_SETTLEMENT_DEPLOYMENT_BLOCK = Number(BASE_BATCH_SETTLEMENT_FROM_BLOCK);
export const CDP_DISCOVERY_URL = 'https://api.cdp.coinbase.com/platform/v2/x402/discovery/resources';

/** `15m`, `90s`, `1h`, `2d`: a whole positive count of a unit. */
export const DURATION_PATTERN = /^([1-9][0-9]*)(s|m|h|d)$/;

function isScheduleExpression(value: string): boolean {
  if (DURATION_PATTERN.test(value)) return true;
  // 5 or 6 fields, then croner's own parse (the scheduler's): a field out of range such as
  // `61 * * * *` is a configuration mistake at start, not an error the running schedule logs...
  const fields = value.trim().split(/\s+/);
  if (!(fields.length === 5 || fields.length === 6)) return false;
  try {
    // ... and one that never fires (`0 0 31 2 *`) is a mistake too
    return new Cron(value, { timezone: 'UTC', paused: true }).nextRun() !== null;
  } catch {
    return false;
  }
}

/**
 * A connection string `pg` reads as a URL: `postgres://` or `postgresql://`. Anything else
 * (`postgres//oops`) would reach the driver, fail to connect and look like a temporary fault.
 */
function isPostgresUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const protocol = new URL(value).protocol;
  return protocol === 'postgres:' || protocol === 'postgresql:';
}

/**
 * One configuration key, defined once: its environment variable, its flag, how its value is
 * read, what it means and its default. The zod schema of the whole configuration, the flag
 * table of the command line, the help text and the table of docs/operations.md are all made from
 * these (a test checks the docs table against them).
 */
export interface ConfigKey {
  readonly env: string;
  /** The command-line flag without `--`, or null for an env-only key. */
  readonly flag: string | null;
  /** The flag's argument in the help text, e.g. `URL` or `N`. */
  readonly arg: string;
  /** What the key means, one line (help and docs). */
  readonly meaning: string;
  /** The default, as the docs show it. */
  readonly shown: string;
  /** Reads the text of the variable; its error messages say what the value must be. */
  readonly schema: z.ZodType;
}

/** Text in, a whole number in [min, max] out, or a message saying so with the value given. */
const wholeNumber = (min: number, max: number) =>
  z.string().transform((text, ctx) => {
    const ok = /^(0|[1-9][0-9]*)$/.test(text.trim()) && Number(text) >= min && Number(text) <= max;
    if (!ok)
      ctx.addIssue({
        code: 'custom',
        message: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(text.slice(0, 40))}`,
      });
    return Number(text);
  });

const oneOf = <T extends string>(values: readonly [T, ...T[]]) =>
  z.string().transform((text, ctx) => {
    if (!(values as readonly string[]).includes(text))
      ctx.addIssue({
        code: 'custom',
        message: `must be one of ${values.join(', ')}, got ${JSON.stringify(text.slice(0, 40))}`,
      });
    return text as T;
  });

/** http:// or https:// URLs, comma-separated; a bad one is named redacted (keys live in URLs). */
const rpcUrls = z.string().transform((text, ctx) => {
  const urls = text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const url of urls) {
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(redactUrl(url).slice(0, 60))} is not a URL; give http:// or https:// URLs, comma-separated`,
      });
      continue;
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      ctx.addIssue({
        code: 'custom',
        message: `${redactUrl(url)} uses ${protocol.slice(0, -1)}://, which the JSON-RPC client does not speak; give an http:// or https:// URL`,
      });
    }
  }
  return urls;
});

export const CONFIG_KEYS = [
  {
    env: 'DATABASE_URL',
    flag: 'database-url',
    arg: 'URL',
    meaning: 'Postgres connection string',
    shown: 'unset: embedded PGlite under `DATA_DIR`',
    schema: z
      .string()
      .refine(isPostgresUrl, 'must be a URL such as postgres://user@host:5432/database (postgres:// or postgresql://)')
      .optional(),
  },
  {
    env: 'DATA_DIR',
    flag: 'data-dir',
    arg: 'DIR',
    meaning: 'where embedded data lives',
    shown: '`./.data`',
    schema: z.string().default('./.data'),
  },
  {
    env: 'RPC_URL',
    flag: 'rpc-url',
    arg: 'URL[,URL...]',
    meaning: 'JSON-RPC URLs (http/https), comma-separated, tried in order',
    shown: 'required for `run`, `schedule`, `audit`',
    schema: rpcUrls.default([]),
  },
  {
    env: 'CATALOG_SOURCE',
    flag: 'catalog',
    arg: 'URL|FILE',
    meaning: 'discovery URL or JSON file',
    shown: 'the CDP discovery URL',
    schema: z.string().default(CDP_DISCOVERY_URL),
  },
  {
    env: 'USDC_ADDRESS',
    flag: 'usdc-address',
    arg: '0x..',
    meaning: 'the contract that stands for Base USDC (local chains)',
    shown: '`0x8335…2913`',
    schema: z
      .string()
      .transform((text, ctx) => {
        if (!/^0x[0-9a-fA-F]{40}$/.test(text))
          ctx.addIssue({
            code: 'custom',
            message: `must be an address, 0x followed by 40 hex digits, got ${JSON.stringify(text.slice(0, 50))}`,
          });
        return text.toLowerCase();
      })
      .default(BASE_USDC),
  },
  {
    env: 'CHAIN_ID',
    flag: 'chain-id',
    arg: 'N',
    meaning: 'chain id every RPC URL must serve',
    shown: '8453',
    schema: wholeNumber(1, 2 ** 53 - 1).default(BASE_CHAIN_ID),
  },
  {
    env: 'AS_OF_BLOCK',
    flag: 'as-of-block',
    arg: 'N',
    meaning: 'compute as of this block',
    shown: 'the `finalized` block',
    schema: z
      .string()
      .transform((text, ctx) => {
        if (!/^(0|[1-9][0-9]*)$/.test(text.trim()))
          ctx.addIssue({
            code: 'custom',
            message: `must be a block number (a whole number), got ${JSON.stringify(text.slice(0, 40))}`,
          });
        return /^[0-9]+$/.test(text.trim()) ? BigInt(text.trim()) : 0n;
      })
      .optional(),
  },
  {
    env: 'BATCH_SETTLEMENT_FROM_BLOCK',
    flag: 'batch-settlement-from-block',
    arg: 'N',
    meaning:
      "block the batch-settlement contract's `ChannelCreated` logs are read from: its deployment block or any block below (for local chains)",
    shown: `${BASE_BATCH_SETTLEMENT_FROM_BLOCK} on chain 8453, else 0`,
    schema: z
      .string()
      .transform((text, ctx) => {
        if (!/^(0|[1-9][0-9]*)$/.test(text.trim()))
          ctx.addIssue({
            code: 'custom',
            message: `must be a block number (a whole number), got ${JSON.stringify(text.slice(0, 40))}`,
          });
        return /^[0-9]+$/.test(text.trim()) ? BigInt(text.trim()) : 0n;
      })
      .optional(),
  },
  {
    env: 'CONFIRMATIONS',
    flag: 'confirmations',
    arg: 'N',
    meaning: 'compute as of latest - N (not with `AS_OF_BLOCK`)',
    shown: '',
    schema: wholeNumber(0, 1_000_000).optional(),
  },
  {
    env: 'PORT',
    flag: 'port',
    arg: 'N',
    meaning: 'API port',
    shown: '8080',
    schema: wholeNumber(0, 65535).default(8080),
  },
  {
    env: 'HOST',
    flag: 'host',
    arg: 'H',
    meaning: 'API address',
    shown: '127.0.0.1',
    schema: z.string().default('127.0.0.1'),
  },
  {
    env: 'PUBLIC_CHAIN',
    flag: null,
    arg: 'BOOL',
    meaning:
      '`true` when RPC_URL is the public Base mainnet: /api/v1/meta says so and the page links payments to basescan.org; `false` for a local chain',
    shown: 'false (the demo: false)',
    schema: oneOf(['true', 'false'])
      .default('false')
      .transform((text) => text === 'true'),
  },
  {
    env: 'RATE_LIMIT_PER_MINUTE',
    flag: 'rate-limit-per-minute',
    arg: 'N',
    meaning: 'API requests per client per minute',
    shown: '600',
    schema: wholeNumber(1, 1_000_000_000).default(600),
  },
  {
    env: 'METHOD_VERSION',
    flag: 'method-version',
    arg: 'X.Y.Z',
    meaning: 'method version new generations are computed with (docs/METHOD.md); retained ones keep theirs',
    shown: 'the current default (3.0.0)',
    schema: z
      .string()
      .regex(/^[0-9]+\.[0-9]+\.[0-9]+$/, 'must be a method version such as 3.0.0')
      .optional(),
  },
  {
    env: 'RETAIN_GENERATIONS',
    flag: 'retain-generations',
    arg: 'N',
    meaning: 'published generations kept',
    shown: '48',
    schema: wholeNumber(1, 100_000).default(48),
  },
  {
    env: 'LOG_LEVEL',
    flag: 'log-level',
    arg: 'LEVEL',
    meaning: 'fatal, error, warn, info, debug, trace or silent',
    shown: 'info',
    schema: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  },
  {
    env: 'LOG_FORMAT',
    flag: 'log-format',
    arg: 'FORMAT',
    meaning: '`auto` (readable on a terminal, JSON lines otherwise), `pretty` or `json`',
    shown: 'auto',
    schema: oneOf(['auto', 'pretty', 'json']).default('auto'),
  },
  {
    env: 'RPC_CONCURRENCY',
    flag: 'rpc-concurrency',
    arg: 'N',
    meaning: 'most JSON-RPC requests in flight at once (1-256)',
    shown: '16',
    schema: wholeNumber(1, 256).default(16),
  },
  {
    env: 'CADENCE_SECONDS',
    flag: null,
    arg: '',
    meaning: "the cadence `serve` announces in `/meta` (set it to your cron's)",
    shown: '900',
    schema: wholeNumber(1, 31_536_000).default(900),
  },
  {
    env: 'SCHEDULE_EVERY',
    flag: 'every',
    arg: '15m|"<cron>"',
    meaning: 'cadence of `schedule`: `15m`, `1h`, `30s` or a cron expression (UTC)',
    shown: '15m',
    schema: z
      .string()
      .refine(
        isScheduleExpression,
        'must be a duration such as 15m, 1h, 30s or a cron expression (UTC) that fires, such as "*/15 * * * *"',
      )
      .default('15m'),
  },
] as const satisfies readonly ConfigKey[];

/** Each flag and the environment variable it stands for (flags win over env). */
export const CONFIG_FLAGS: Readonly<Record<string, string>> = Object.fromEntries(
  CONFIG_KEYS.flatMap((k) => (k.flag ? [[k.flag, k.env]] : [])),
);

/** The help text's lines for the configuration flags (`only`: those of these variables). */
export function configHelpLines(only?: readonly string[]): string[] {
  return CONFIG_KEYS.filter((k) => k.flag && (!only || only.includes(k.env))).map((k) => {
    const left = `  --${k.flag} ${k.arg}`.padEnd(30);
    const shown = k.shown.replaceAll('`', '');
    const fallback = !shown ? '' : /^(required|unset)/.test(shown) ? `; ${shown}` : `; default: ${shown}`;
    return `${left}[${k.env}]`.padEnd(55) + ` ${k.meaning.replaceAll('`', '')}${fallback}`;
  });
}

/** The table of docs/operations.md, "Configuration", as markdown rows. */
export function configDocRows(): string[] {
  return CONFIG_KEYS.map((k) => `| ${k.flag ? `\`--${k.flag}\`` : ''} | \`${k.env}\` | ${k.meaning} | ${k.shown} |`);
}

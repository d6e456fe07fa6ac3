import { z } from 'zod';

/** Base mainnet chain id and USDC contract: the defaults the method is defined on. */
export const BASE_CHAIN_ID = 8453;
export const BASE_USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
export const CDP_DISCOVERY_URL = 'https://api.cdp.coinbase.com/platform/v2/x402/discovery/resources';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex digits')
  .transform((s) => s.toLowerCase());
/** `15m`, `90s`, `1h`, `2d`: a whole positive count of a unit. */
export const DURATION_PATTERN = /^([1-9][0-9]*)(s|m|h|d)$/;

function isScheduleExpression(value: string): boolean {
  if (DURATION_PATTERN.test(value)) return true;
  // Cron expressions are validated by the scheduler (croner) when `schedule` starts; here only
  // their shape: 5 or 6 fields of cron characters.
  const fields = value.trim().split(/\s+/);
  return (fields.length === 5 || fields.length === 6) && fields.every((f) => /^[0-9*,\-/?LW#A-Za-z]+$/.test(f));
}

const positiveInt = z.coerce.number().int().positive();

/**
 * The configuration, from flags and environment variables (flags win). Every field is named as
 * its environment variable so that an error names what the user set.
 */
export const ConfigSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  RPC_URL: z
    .string()
    .optional()
    .transform((s) => (s ? s.split(',').map((u) => u.trim()).filter(Boolean) : []))
    .pipe(z.array(z.url({ protocol: /^(https?|wss?)$/ }))),
  CATALOG_SOURCE: z.string().min(1).default(CDP_DISCOVERY_URL),
  USDC_ADDRESS: address.default(BASE_USDC),
  CHAIN_ID: positiveInt.default(BASE_CHAIN_ID),
  AS_OF_BLOCK: z.coerce.bigint().nonnegative().optional(),
  CONFIRMATIONS: z.coerce.number().int().nonnegative().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(600),
  RETAIN_GENERATIONS: positiveInt.default(48),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // How logs are written: `auto` (readable on a terminal, JSON lines otherwise), `pretty` or `json`.
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json']).default('auto'),
  // The most JSON-RPC requests in flight at once, per run (the indexer adapts below it on 429s).
  RPC_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  CADENCE_SECONDS: positiveInt.default(900),
  // The cadence of `schedule`: a duration (`15m`, `1h`, `30s`) or a cron expression (5 or 6 fields).
  SCHEDULE_EVERY: z
    .string()
    .default('15m')
    .refine(isScheduleExpression, 'must be a duration such as 15m, 1h, 30s or a cron expression such as "*/15 * * * *"'),
}).refine((c) => c.AS_OF_BLOCK === undefined || c.CONFIRMATIONS === undefined, {
  message: 'set AS_OF_BLOCK or CONFIRMATIONS, not both',
  path: ['AS_OF_BLOCK'],
});

export type Config = Readonly<z.output<typeof ConfigSchema>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the configuration once. `env` is usually process.env; `overrides` are parsed flags
 * (named like the env variables). Every problem is reported at once, by name; the result is frozen.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  overrides: Record<string, string | undefined> = {},
): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.shape ?? {})) {
    const value = overrides[key] ?? env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const result = ConfigSchema.safeParse(input);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`),
    );
  }
  return Object.freeze(result.data);
}

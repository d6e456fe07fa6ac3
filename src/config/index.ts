import { z } from 'zod';
import { CONFIG_KEYS } from './keys.ts';
import { TallyError } from '../lib/errors.ts';

export {
  BASE_BATCH_SETTLEMENT_FROM_BLOCK,
  BASE_CHAIN_ID,
  BASE_USDC,
  BATCH_SETTLEMENT_DEPLOYMENT_BLOCK,
  CDP_DISCOVERY_URL,
  CONFIG_FLAGS,
  CONFIG_KEYS,
  DURATION_PATTERN,
  FUNDING_LOOKBACK_SECONDS,
} from './keys.ts';

type Keys = (typeof CONFIG_KEYS)[number];
type Shape = { [K in Keys as K['env']]: K['schema'] };

/**
 * The configuration, from flags and environment variables (flags win), made from the keys of
 * ./keys.ts. Every field is named as its environment variable so that an error names what the
 * user set.
 */
export const ConfigSchema = z.object(Object.fromEntries(CONFIG_KEYS.map((k) => [k.env, k.schema])) as Shape);

export type Config = Readonly<z.output<typeof ConfigSchema>>;

export class ConfigError extends TallyError {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the configuration once, before anything is opened. `env` is usually process.env;
 * `overrides` are parsed flags (named like the env variables); `required` names keys the command
 * cannot do without (e.g. RPC_URL for `run`), with the command's name for the message. Every
 * problem is reported at once, by name, in words; the result is frozen.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  overrides: Record<string, string | undefined> = {},
  required: { keys: readonly string[]; by: string } = { keys: [], by: '' },
): Config {
  const input: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const value = overrides[key.env] ?? env[key.env];
    if (value !== undefined && value !== '') input[key.env] = value;
  }
  const problems: string[] = [];
  for (const name of required.keys) {
    if (input[name] === undefined) {
      const key = CONFIG_KEYS.find((k) => k.env === name);
      problems.push(`${name}: is required for ${required.by}; set ${key?.flag ? `--${key.flag} or ` : ''}${name}`);
    }
  }
  if (input.AS_OF_BLOCK !== undefined && input.CONFIRMATIONS !== undefined) {
    problems.push('AS_OF_BLOCK: set AS_OF_BLOCK or CONFIRMATIONS, not both');
  }
  const result = ConfigSchema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(`${String(issue.path[0] ?? 'config')}: ${issue.message}`);
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return Object.freeze(result.data);
}

/** The configured URLs that may carry secrets: every log line and message is redacted with them (redactText). */
export function secretUrls(
  config: Partial<Pick<Config, 'RPC_URL' | 'DATABASE_URL' | 'CATALOG_SOURCE'>> | undefined,
): string[] {
  if (!config) return [];
  return [
    ...(config.RPC_URL ?? []),
    ...(config.DATABASE_URL ? [config.DATABASE_URL] : []),
    ...(config.CATALOG_SOURCE ? [config.CATALOG_SOURCE] : []),
  ];
}

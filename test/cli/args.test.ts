import { describe, expect, it } from 'vitest';
import { parseCommandLine, parseGeneration, UsageError } from '../../src/cli/args.ts';
import { runCommand } from '../../src/cli/command.ts';
import { loadConfig } from '../../src/config/index.ts';

async function capture(argv: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCommand(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('parseCommandLine', () => {
  it('default: flags become overrides named like the env variables', () => {
    const parsed = parseCommandLine([
      'run',
      '--rpc-url',
      'http://a',
      '--catalog',
      'f.json',
      '--as-of-block',
      '12',
      '--every',
      '5m',
    ]);
    expect(parsed.command).toBe('run');
    expect(parsed.overrides).toEqual({
      RPC_URL: 'http://a',
      CATALOG_SOURCE: 'f.json',
      AS_OF_BLOCK: '12',
      SCHEDULE_EVERY: '5m',
    });
  });

  it('behavior: flags win over env', () => {
    const parsed = parseCommandLine(['serve', '--port', '9000']);
    const config = loadConfig({ PORT: '8000', HOST: '0.0.0.0' }, parsed.overrides);
    expect(config.PORT).toBe(9000);
    expect(config.HOST).toBe('0.0.0.0');
  });

  it('args: no command means help', () => {
    expect(parseCommandLine([]).help).toBe(true);
    expect(parseCommandLine(['--help']).help).toBe(true);
  });

  it('error: unknown command and unknown flag are usage errors', () => {
    expect(() => parseCommandLine(['runn'])).toThrow(UsageError);
    expect(() => parseCommandLine(['run', '--nope'])).toThrow(UsageError);
    expect(() => parseCommandLine(['run', 'extra'])).toThrow(/unexpected argument: extra/);
  });

  it('error: --generation must be a positive integer', () => {
    expect(parseGeneration('7')).toBe(7);
    for (const bad of [undefined, '0', '-1', '1.5', 'x', '99999999999'])
      expect(() => parseGeneration(bad)).toThrow(UsageError);
  });
});

describe('runCommand', () => {
  it('default: --help prints every command and exits 0', async () => {
    const { code, out } = await capture(['--help']);
    expect(code).toBe(0);
    for (const command of ['run', 'serve', 'schedule', 'audit', 'export', 'migrate', 'demo'])
      expect(out).toContain(`  ${command} `);
  });

  it('error: a config error exits 1 naming every problem at once', async () => {
    const { code, err } = await capture(['migrate', '--port', 'x'], {
      CHAIN_ID: '-3',
      USDC_ADDRESS: '0x12',
      LOG_LEVEL: 'loud',
      SCHEDULE_EVERY: '15 minutes',
    });
    expect(code).toBe(1);
    for (const name of ['PORT', 'CHAIN_ID', 'USDC_ADDRESS', 'LOG_LEVEL', 'SCHEDULE_EVERY'])
      expect(err).toContain(`${name}:`);
  });

  it('error: a usage error exits 1 and points to --help', async () => {
    const { code, err } = await capture(['export', '--generation', 'abc']);
    expect(code).toBe(1);
    expect(err).toContain('--generation must be a positive integer');
    expect(err).toContain('x402-tally --help');
  });

  it('error: run without RPC_URL exits 1 saying which setting is missing', async () => {
    const { code, err } = await capture(['audit', '--generation', '1']);
    expect(code).toBe(1);
    expect(err).toContain('RPC_URL: is required for audit; set --rpc-url or RPC_URL');
  });

  it('behavior: an RPC URL never appears unredacted in an error', async () => {
    // A syntactically valid but unusable value gives an error that mentions the URL list.
    const { err } = await capture([
      'run',
      '--rpc-url',
      'https://rpc.example/v2/SECRETKEY',
      '--catalog',
      '/nonexistent/catalog.json',
      '--database-url',
      'postgres://u:pw@127.0.0.1:1/x',
    ]);
    expect(err).not.toContain('SECRETKEY');
    expect(err).not.toContain(':pw@');
  });
});

describe('SCHEDULE_EVERY', () => {
  it('args: durations and cron expressions are accepted', () => {
    for (const every of ['15m', '30s', '1h', '2d', '*/15 * * * *', '0 */5 * * * *']) {
      expect(loadConfig({ SCHEDULE_EVERY: every }).SCHEDULE_EVERY).toBe(every);
    }
  });
});

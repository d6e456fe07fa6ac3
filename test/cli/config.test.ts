import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, CONFIG_KEYS, loadConfig } from '../../src/config/index.ts';
import { configDocRows } from '../../src/config/keys.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { tally } from '../helpers/e2e.ts';

/** Issue 12 finding 7 and issue 11 "configuration defined once". */
function problemsOf(env: Record<string, string>, required?: { keys: string[]; by: string }): string[] {
  try {
    loadConfig(env, {}, required);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  return [];
}

describe('configuration errors', () => {
  it('error: every problem at once, in words, with the value given', () => {
    expect(
      problemsOf(
        { PORT: 'abc', LOG_LEVEL: 'loud', CHAIN_ID: '-1', RPC_CONCURRENCY: '0' },
        { keys: ['RPC_URL'], by: 'run' },
      ),
    ).toEqual([
      'RPC_URL: is required for run; set --rpc-url or RPC_URL',
      'CHAIN_ID: must be a whole number from 1 to 9007199254740991, got "-1"',
      'PORT: must be a whole number from 0 to 65535, got "abc"',
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'RPC_CONCURRENCY: must be a whole number from 1 to 256, got "0"',
    ]);
  });

  it('error: an RPC URL the client cannot speak is refused, named redacted', () => {
    expect(problemsOf({ RPC_URL: 'ws://127.0.0.1:1/v2/SECRETKEY' })).toEqual([
      'RPC_URL: ws://127.0.0.1:1/… uses ws://, which the JSON-RPC client does not speak; give an http:// or https:// URL',
    ]);
    expect(problemsOf({ RPC_URL: 'https://a.example/k,nonsense' })[0]).toMatch(/^RPC_URL: "nonsense" is not a URL/);
    expect(problemsOf({ RPC_URL: 'https://a.example/k, http://b.example' })).toEqual([]);
  });

  it('error: AS_OF_BLOCK with CONFIRMATIONS is reported next to the other problems', () => {
    expect(problemsOf({ AS_OF_BLOCK: '12', CONFIRMATIONS: '3', PORT: '70000' })).toEqual([
      'AS_OF_BLOCK: set AS_OF_BLOCK or CONFIRMATIONS, not both',
      'PORT: must be a whole number from 0 to 65535, got "70000"',
    ]);
  });

  it('error: run without RPC_URL and with a bad LOG_LEVEL names both, before opening any database', async () => {
    // DATABASE_URL points at a port nobody listens on: opening it would fail differently (or hang).
    // Nothing of a run starts: no step calls its hook first (src/run/cycle.ts), and no database
    // error shows that a connection was tried.
    const reached: string[] = [];
    const { code, out: text } = await tally(
      ['run'],
      { LOG_LEVEL: 'loud', DATABASE_URL: 'postgres://u:pw@127.0.0.1:1/x' },
      { hook: (point) => void reached.push(point) },
    );
    expect(code).toBe(1);
    expect(text).toContain('RPC_URL: is required for run');
    expect(text).toContain('LOG_LEVEL: must be one of');
    expect(text).not.toMatch(/ECONNREFUSED|database/i);
    expect(reached).toEqual([]);
  });

  it('error: run with a ws:// RPC_URL exits 1 naming RPC_URL (not 75 after retries)', async () => {
    const { code, out: text } = await tally(['run'], {
      RPC_URL: 'ws://127.0.0.1:1/rpc',
      DATA_DIR: '/nonexistent/never-created',
    });
    expect(code).toBe(1);
    expect(text).toContain('RPC_URL: ws://127.0.0.1:1/… uses ws://');
  });

  it('error: run with a bad BATCH_SETTLEMENT_FROM_BLOCK exits 1 naming it', async () => {
    const { code, out: text } = await tally(['run'], {
      RPC_URL: 'http://127.0.0.1:1/rpc',
      BATCH_SETTLEMENT_FROM_BLOCK: '-5',
      DATA_DIR: '/nonexistent/never-created',
    });
    expect(code).toBe(1);
    expect(text).toContain('BATCH_SETTLEMENT_FROM_BLOCK: must be a block number (a whole number), got "-5"');
  });

  it('default: BATCH_SETTLEMENT_FROM_BLOCK is read as a block number, unset when not given', () => {
    expect(loadConfig({ BATCH_SETTLEMENT_FROM_BLOCK: '123' }).BATCH_SETTLEMENT_FROM_BLOCK).toBe(123n);
    expect(loadConfig({}).BATCH_SETTLEMENT_FROM_BLOCK).toBeUndefined();
  });
});

describe('configuration defined once', () => {
  it('default: the table of docs/operations.md lists every key as src/config/keys.ts defines it', () => {
    const doc = readFileSync(path.join(projectRoot, 'docs/operations.md'), 'utf8');
    const table = doc.split('\n').filter((l) => /^\| (`--[a-z-]+`)? *\| `[A-Z_]+` \|/.test(l));
    expect(table).toEqual(configDocRows());
    expect(table).toHaveLength(CONFIG_KEYS.length);
  });

  it('default: --help names every flag with its variable', async () => {
    const { out: text } = await tally(['--help'], {});
    for (const key of CONFIG_KEYS) if (key.flag) expect(text).toMatch(new RegExp(`--${key.flag} .*\\[${key.env}\\]`));
  });
});

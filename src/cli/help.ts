import { configHelpLines } from '../config/keys.ts';
import type { CommandName } from './args.ts';

/** The text of `x402-tally --help`: the configuration flags come from src/config/keys.ts. */
export const HELP = `x402-tally — verified 30-day revenue of x402 Bazaar sellers, from Base USDC settlements

Usage: x402-tally <command> [flags]     (x402-tally <command> --help: that command's flags)

Commands
  run        one cycle: catalog -> chain -> method -> publish        exit 0 published, 1 failed, 75 try later
  serve      the read-only JSON API (never migrates)
  schedule   run on a cadence (--every) and serve, in one process (--no-serve: runs only)
  audit      re-run the method for --generation N or --bundle DIR      exit 0 identical, 1 differences, 75 try later
  export     write the bundle of --generation N into --out DIR
  migrate    apply the SQL migrations
  demo       embedded database + local demo chain, one run, then serve (what npm start runs)
  mcp        the MCP server over stdio, read-only (serve also answers MCP at /mcp)

Flags (each also read from the environment variable in brackets; flags win)
${configHelpLines().join('\n')}
  --generation N                                       audit, export
  --out DIR                                            export
  --bundle DIR                                         audit from an exported bundle (no database needed)
  --seller 0x...                                       audit one seller from its own logs only
  --make-latest                                        run: with an AS_OF_BLOCK older than the live
                                                       generation's, make the result the latest anyway
  -h, --help

Logs are JSON lines on stderr; command output is on stdout. See docs/operations.md.
`;

const STORE = ['DATABASE_URL', 'DATA_DIR'];
const LOGS = ['LOG_LEVEL', 'LOG_FORMAT'];
const CHAIN = ['RPC_URL', 'USDC_ADDRESS', 'CHAIN_ID', 'RPC_CONCURRENCY'];
const RUN = [
  ...STORE,
  ...CHAIN,
  'CATALOG_SOURCE',
  'AS_OF_BLOCK',
  'CONFIRMATIONS',
  'BATCH_SETTLEMENT_FROM_BLOCK',
  'METHOD_VERSION',
  'RETAIN_GENERATIONS',
  ...LOGS,
];
const API = ['PORT', 'HOST', 'RATE_LIMIT_PER_MINUTE', 'CADENCE_SECONDS'];

/** One command's page: what it does, its own flags, and the configuration it reads. */
interface CommandHelp {
  readonly usage: string;
  readonly about: string;
  /** Flags of this command only, as help lines. */
  readonly flags: readonly string[];
  /** The configuration variables it reads (their flags are listed from src/config/keys.ts). */
  readonly keys: readonly string[];
}

const line = (flag: string, meaning: string) => `  ${flag.padEnd(52)} ${meaning}`;

const COMMAND_HELP: Record<CommandName, CommandHelp> = {
  run: {
    usage: 'x402-tally run [flags]',
    about:
      'One cycle: read the catalog, sync the chain, compute the method, publish a generation.\nExit 0 published, 1 failed (fix something first), 75 temporary (run again later).',
    flags: [line('--make-latest', 'with an AS_OF_BLOCK older than the live generation, make it the latest anyway')],
    keys: RUN,
  },
  serve: {
    usage: 'x402-tally serve [flags]',
    about: 'The read-only JSON API, the web page and MCP at /mcp. Never migrates: run `migrate` first.',
    flags: [],
    keys: [...STORE, ...API, ...LOGS],
  },
  schedule: {
    usage: 'x402-tally schedule [--every 15m|"<cron>"] [--no-serve] [flags]',
    about: 'Runs at start and then on the cadence, and serves the API in the same process.',
    flags: [line('--no-serve', 'runs only, no API')],
    keys: [...RUN, 'SCHEDULE_EVERY', ...API],
  },
  audit: {
    usage: 'x402-tally audit (--generation N | --bundle DIR) [--seller 0x...] [flags]',
    about:
      'Re-runs the method from the chain and compares it with a published generation.\nExit 0 identical, 1 differences (named), 75 temporary.',
    flags: [
      line('--generation N', 'a generation of the database'),
      line('--bundle DIR', 'an exported bundle (no database needed)'),
      line('--seller 0x...', 'one seller, from its own logs only'),
    ],
    keys: [...STORE, ...CHAIN, ...LOGS],
  },
  export: {
    usage: 'x402-tally export --generation N --out DIR [flags]',
    about: 'Writes the bundle of a generation (what `audit --bundle` reads) into a folder.',
    flags: [line('--generation N', 'the generation'), line('--out DIR', 'the folder to write')],
    keys: [...STORE, ...LOGS],
  },
  migrate: {
    usage: 'x402-tally migrate [flags]',
    about: 'Applies the SQL migrations the code needs (run also does).',
    flags: [],
    keys: [...STORE, ...LOGS],
  },
  demo: {
    usage: 'x402-tally demo [flags]',
    about:
      'An embedded database and a local demo chain, one run, then the API (what `npm start` runs).\nNeeds no network, server or key.',
    flags: [],
    keys: ['DATA_DIR', 'PORT', 'HOST', 'METHOD_VERSION', ...LOGS],
  },
  mcp: {
    usage: 'x402-tally mcp [flags]',
    about: 'The MCP server over stdio, read-only (serve also answers MCP at /mcp).',
    flags: [],
    keys: [...STORE, ...LOGS],
  },
};

/** The text of `x402-tally <command> --help`. */
export function commandHelp(name: CommandName): string {
  const page = COMMAND_HELP[name];
  return `Usage: ${page.usage}

${page.about}

Flags (each also read from the environment variable in brackets; flags win)
${[...configHelpLines(page.keys), ...page.flags, line('-h, --help', 'this page')].join('\n')}

All commands: x402-tally --help. Settings: docs/operations.md.
`;
}

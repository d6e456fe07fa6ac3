import { configHelpLines } from '../config/keys.ts';

/** The text of `x402-tally --help`: the configuration flags come from src/config/keys.ts. */
export const HELP = `x402-tally — verified 30-day revenue of x402 Bazaar sellers, from Base USDC settlements

Usage: x402-tally <command> [flags]

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

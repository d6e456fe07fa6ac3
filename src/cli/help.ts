/** The text of `x402-tally --help`. */
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

Flags (each also read from the environment variable in brackets; flags win)
  --database-url URL          [DATABASE_URL]           Postgres; unset: embedded PGlite under DATA_DIR
  --data-dir DIR              [DATA_DIR]               embedded data (default ./.data)
  --rpc-url URL[,URL...]      [RPC_URL]                JSON-RPC endpoints in fallback order (run, audit)
  --catalog URL|FILE          [CATALOG_SOURCE]         Bazaar discovery URL or a JSON file (default: CDP)
  --usdc-address 0x..         [USDC_ADDRESS]           stands for Base USDC (local chains)
  --chain-id N                [CHAIN_ID]               default 8453
  --as-of-block N             [AS_OF_BLOCK]            as-of point (default: the finalized block)
  --confirmations N           [CONFIRMATIONS]          as-of = latest - N instead
  --port N / --host H         [PORT] [HOST]            API address (default 127.0.0.1:8080)
  --rate-limit-per-minute N   [RATE_LIMIT_PER_MINUTE]  per client (default 600)
  --retain-generations N      [RETAIN_GENERATIONS]     generations kept (default 48)
  --log-level LEVEL           [LOG_LEVEL]              fatal|error|warn|info|debug|trace|silent
  --log-format FORMAT         [LOG_FORMAT]             auto|pretty|json (auto: readable on a terminal)
  --rpc-concurrency N         [RPC_CONCURRENCY]        most RPC requests in flight (1-256)
  --every 15m|"<cron>"        [SCHEDULE_EVERY]         cadence of schedule (default 15m)
  --generation N                                       audit, export
  --out DIR                                            export
  --bundle DIR                                         audit from an exported bundle (no database needed)
  --seller 0x...                                       audit one seller from its own logs only
  -h, --help

Logs are JSON lines on stderr; command output is on stdout. See docs/operations.md.
`;

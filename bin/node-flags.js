// The node flags of the commands that bin/x402-tally.js runs in a process of their own, started
// with those flags on its command line: V8's heap flags and glibc's MALLOC_ARENA_MAX take effect
// only when a process starts. Shared with bench/indexer.ts --whole, which starts the process it
// measures the same way as `run` (docs/operations.md, "The processes of run, schedule and audit").

/** The flags, and the environment added, of each such command. */
export const COMMAND_PROCESS = {
  // No optimising tier for the embedded database's WebAssembly, and V8's heap tuned for memory
  // over speed: production flags, not testing ones (docs/benchmarks.md, "Audit memory").
  audit: {
    node: ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up', '--optimize-for-size'],
    env: { MALLOC_ARENA_MAX: '1' },
  },
  run: { node: ['--max-semi-space-size=4'], env: {} },
  schedule: { node: ['--max-semi-space-size=4'], env: {} },
};

/**
 * Compiles the Solidity stand-ins of the x402 settlement contracts (contracts/x402-stand-ins/*.sol)
 * with the pinned solc-js of package.json and writes their ABI and bytecode to
 * contracts/x402-stand-ins/build.json, which is committed: tests and the demo chain load that file
 * and never need a compiler. test/chain/x402-contracts-build.test.ts recompiles and compares.
 *
 *   npx tsx scripts/compile-contracts.ts          # rewrite build.json
 *   npx tsx scripts/compile-contracts.ts --check  # exit 1 when build.json is not what solc makes
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../src/lib/paths.ts';
import type { Abi } from 'viem';
import { STAND_IN_BUILD_PATH, type StandInBuild } from '../src/devchain/x402-contracts.ts';

export const STAND_INS_DIR = path.join(projectRoot, 'contracts', 'x402-stand-ins');
export const BUILD_PATH = STAND_IN_BUILD_PATH;

/** The x402 repository's own settings (contracts/evm/foundry.toml): solc 0.8.28, cancun, 200 runs, no CBOR. */
const SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  // No metadata hash or CBOR tail: the bytecode depends on the source text only, not on paths.
  metadata: { bytecodeHash: 'none', appendCBOR: false },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

/** Compiles every .sol file of contracts/x402-stand-ins; throws on any compiler error. */
export function compileStandIns(): StandInBuild {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { version(): string; compile(input: string): string };
  const files = readdirSync(STAND_INS_DIR)
    .filter((f) => f.endsWith('.sol'))
    .sort();
  const sources = Object.fromEntries(
    files.map((f) => [f, { content: readFileSync(path.join(STAND_INS_DIR, f), 'utf8') }]),
  );
  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS })),
  ) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity !== 'info');
  if (problems.length > 0) {
    throw new Error(`solc ${solc.version()}:\n${problems.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contracts: StandInBuild['contracts'] = {};
  for (const source of files) {
    for (const [name, out] of Object.entries(output.contracts?.[source] ?? {})) {
      // Interfaces and abstract contracts have no code to place on a chain.
      if (out.evm.deployedBytecode.object === '') continue;
      contracts[name] = {
        source,
        abi: out.abi as Abi,
        bytecode: `0x${out.evm.bytecode.object}`,
        deployedBytecode: `0x${out.evm.deployedBytecode.object}`,
      };
    }
  }
  return { compiler: solc.version(), settings: SETTINGS, contracts };
}

/** build.json's exact text for a build (stable key order, two-space JSON, final newline). */
export function buildText(build: StandInBuild): string {
  return `${JSON.stringify(build, null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = buildText(compileStandIns());
  if (process.argv.includes('--check')) {
    if (readFileSync(BUILD_PATH, 'utf8') !== text) {
      console.error(`${path.relative(projectRoot, BUILD_PATH)} is stale: run npx tsx scripts/compile-contracts.ts`);
      process.exit(1);
    }
  } else {
    writeFileSync(BUILD_PATH, text);
    console.log(`wrote ${path.relative(projectRoot, BUILD_PATH)}`);
  }
}

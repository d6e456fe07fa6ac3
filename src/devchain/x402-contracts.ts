/**
 * The x402 settlement contracts of Base (Permit2, the exact and upto Permit2 proxies, the
 * batch-settlement contract and its two deposit collectors) on a local anvil node, next to the real
 * USDC code of usdc.ts.
 *
 * No npm package ships their bytecode, so the node runs STAND-INS written for this project from the
 * published interfaces (contracts/x402-stand-ins/*.sol, compiled by scripts/compile-contracts.ts
 * into the committed build.json): the same addresses, function signatures, events and EIP-712
 * domains, so the official `@x402/evm` client and facilitator code pays through them unchanged and
 * the receipts hold the logs the real contracts write. What each stand-in leaves out is listed in
 * docs/x402-contracts.md.
 *
 * Addresses and ABIs come from `@x402/evm` 2.27.0 where it exports them; the rest (the Permit2
 * deposit collector's address, the batch contract's events) from the x402 repository at commit
 * 84ffb6412a1f2f45a62971c5549eff794281c099 (contracts/evm/README.md, contracts/evm/src).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Abi, Address, Hex } from 'viem';
import { X402_CONTRACTS, type X402ContractKey } from '../chain/x402.ts';
import { projectRoot } from '../lib/paths.ts';
import type { DevClients } from './tx.ts';

// The addresses, ABIs and topic0 values live in the chain stage, which reads them too.
export {
  batchSettlementAbi,
  exactProxyAbi,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  uptoProxyAbi,
  X402_CONTRACTS,
  X402_TOPIC0,
  type X402ContractKey,
} from '../chain/x402.ts';

/**
 * Permit2's EIP-712 types for a channel deposit through the Permit2 deposit collector: the
 * collector's witness `DepositWitness(bytes32 channelId)` (x402 repository at commit
 * 84ffb6412a1f2f45a62971c5549eff794281c099, contracts/evm/src/periphery/Permit2DepositCollector.sol;
 * docs/x402-contracts.md). `@x402/evm` 2.27.0 does not export it.
 */
export const PERMIT2_DEPOSIT_WITNESS_TYPES = {
  PermitWitnessTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'witness', type: 'DepositWitness' },
  ],
  TokenPermissions: [
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
  DepositWitness: [{ name: 'channelId', type: 'bytes32' }],
} as const;

/** Which stand-in of build.json runs at each canonical address. */
export const STAND_IN_NAMES: Readonly<Record<X402ContractKey, string>> = Object.freeze({
  permit2: 'Permit2StandIn',
  exactProxy: 'X402ExactPermit2ProxyStandIn',
  uptoProxy: 'X402UptoPermit2ProxyStandIn',
  batchSettlement: 'X402BatchSettlementStandIn',
  erc3009DepositCollector: 'X402Erc3009DepositCollectorStandIn',
  permit2DepositCollector: 'X402Permit2DepositCollectorStandIn',
});

/** contracts/x402-stand-ins/build.json: what scripts/compile-contracts.ts writes. */
export interface StandInBuild {
  compiler: string;
  settings: unknown;
  contracts: Record<string, { source: string; abi: Abi; bytecode: Hex; deployedBytecode: Hex }>;
}

export const STAND_IN_BUILD_PATH = path.join(projectRoot, 'contracts', 'x402-stand-ins', 'build.json');

let cachedBuild: StandInBuild | undefined;
/** The committed build of the stand-ins (no compiler needed at run time). */
export function standInBuild(): StandInBuild {
  cachedBuild ??= JSON.parse(readFileSync(STAND_IN_BUILD_PATH, 'utf8')) as StandInBuild;
  return cachedBuild;
}

/**
 * Puts every stand-in's runtime code at its canonical address (anvil_setCode). They keep no
 * constructor state (their addresses of Permit2 and the batch contract are constants), so nothing
 * else is written. Needs USDC at the Base address for payments, but not to install.
 */
export async function installX402Contracts(clients: DevClients): Promise<typeof X402_CONTRACTS> {
  const build = standInBuild();
  for (const [key, address] of Object.entries(X402_CONTRACTS) as [X402ContractKey, Address][]) {
    const contract = build.contracts[STAND_IN_NAMES[key]];
    if (!contract) throw new Error(`installX402Contracts: ${STAND_IN_NAMES[key]} is missing from build.json`);
    await clients.test.setCode({ address, bytecode: contract.deployedBytecode });
    const code = await clients.public.getCode({ address });
    if (code?.toLowerCase() !== contract.deployedBytecode.toLowerCase()) {
      throw new Error(`installX402Contracts: the node did not take the code of ${STAND_IN_NAMES[key]} at ${address}`);
    }
  }
  return X402_CONTRACTS;
}

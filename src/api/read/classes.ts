import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm';
import { toEventSelector } from 'viem';
import { BATCH_SETTLEMENT_DEPLOYMENT_BLOCK } from '../../config/index.ts';
import type { GenerationRow } from './generation.ts';

/**
 * What the API says about method 3.0.0's evidence classes (SPEC section 2, "Method 3.0.0"): which
 * generations have them, the contracts and events that define each, and the x402 infrastructure
 * that is never a seller. The API may not import the chain readers (test/architecture), so the
 * addresses come from `@x402/evm` 2.27.0 as src/chain/x402.ts takes them, and each topic0 is the
 * selector of its event signature; test/api/method3.test.ts checks both equal src/chain/x402.ts.
 * Every hex value is lowercase, as the API writes them.
 */

const lower = (hex: string) => hex.toLowerCase();

/** The canonical x402 contracts of Base, lowercase. */
const CONTRACTS = {
  permit2: lower(PERMIT2_ADDRESS),
  exactProxy: lower(x402ExactPermit2ProxyAddress),
  uptoProxy: lower(x402UptoPermit2ProxyAddress),
  batchSettlement: lower(BATCH_SETTLEMENT_ADDRESS),
  erc3009DepositCollector: lower(ERC3009_DEPOSIT_COLLECTOR_ADDRESS),
  // Not exported by @x402/evm 2.27.0: SPEC "x402 infrastructure is never a seller", and the x402
  // repository's contracts/evm/README.md (docs/x402-contracts.md).
  permit2DepositCollector: '0x4020425faf3b746c082c2f942b4e5159887b0005',
} as const;

/** The events whose logs define the classes, by signature (the form provenance names them in). */
const EVENTS = {
  transfer: 'Transfer(address,address,uint256)',
  authorizationUsed: 'AuthorizationUsed(address,bytes32)',
  proxySettled: 'Settled()',
  proxySettledWithPermit: 'SettledWithPermit()',
  claimed: 'Claimed(bytes32,address,uint128,uint128)',
  channelCreated: 'ChannelCreated(bytes32,(address,address,address,address,address,uint40,bytes32))',
} as const;

/** The four classes in the order of the published per-class arrays (migration 0029). */
export const CLASSES = ['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'] as const;
export type EvidenceClass = (typeof CLASSES)[number];

/** The reasons a payment is internal (SPEC "External revenue"). */
export const INTERNAL_REASONS = ['seller_funded', 'same_operator'] as const;

/**
 * Whether a generation was computed by method 3.x, the first with classes and external revenue.
 * 1.x and 2.x generations have none of these numbers: the API serves them as null there (SPEC
 * "Versions side by side").
 */
export function hasClasses(g: Pick<GenerationRow, 'method_version'>): boolean {
  const major = Number(/^(\d+)\./.exec(g.method_version)?.[1] ?? 0);
  return major >= 3;
}

/**
 * The x402 contracts that are never a seller (SPEC "x402 infrastructure is never a seller"):
 * Permit2, both Permit2 proxies, the batch-settlement contract and its two deposit collectors.
 */
export const X402_INFRASTRUCTURE: readonly string[] = Object.freeze(Object.values(CONTRACTS));

/** One class: the contracts and the events (by signature) whose logs define it. */
function classLogs(usdc: string): { class: EvidenceClass; contracts: string[]; events: string[] }[] {
  const token = lower(usdc);
  const proxyEvents = [EVENTS.proxySettled, EVENTS.proxySettledWithPermit, EVENTS.transfer];
  return [
    { class: 'eip3009', contracts: [token], events: [EVENTS.transfer, EVENTS.authorizationUsed] },
    { class: 'permit2_exact', contracts: [CONTRACTS.exactProxy, token], events: proxyEvents },
    { class: 'permit2_upto', contracts: [CONTRACTS.uptoProxy, token], events: proxyEvents },
    {
      class: 'batch_settlement',
      contracts: [CONTRACTS.batchSettlement],
      events: [EVENTS.claimed, EVENTS.channelCreated],
    },
  ];
}

/**
 * `/meta` `classes`: per class, the contracts and topic0 values whose logs define it (SPEC
 * "Details"; USDC and its Transfer are listed for the classes that pair one).
 */
export function classDefinitions(usdc: string): { class: EvidenceClass; contracts: string[]; topic0: string[] }[] {
  return classLogs(usdc).map((c) => ({
    class: c.class,
    contracts: c.contracts,
    topic0: c.events.map((e) => lower(toEventSelector(e))),
  }));
}

/** `provenance.source.classes` under 3.0.0: every class's contracts and events, by signature. */
export function provenanceClasses(usdc: string): { class: EvidenceClass; contracts: string[]; events: string[] }[] {
  return classLogs(usdc);
}

/**
 * The batch contract's deployment block of a 3.0.0 generation: as it recorded it in its constants;
 * else the block its run read `ChannelCreated` from (the `x402_channels` source's `from_block`:
 * BATCH_SETTLEMENT_FROM_BLOCK, 0 on a local chain); else Base's documented one.
 */
export function deploymentBlockOf(g: Partial<Pick<GenerationRow, 'constants' | 'sources'>>): number {
  const recorded = (g.constants as { batch_settlement_deployment_block?: number } | undefined)
    ?.batch_settlement_deployment_block;
  const channels = Array.isArray(g.sources)
    ? (g.sources as { name?: unknown; from_block?: unknown }[]).find((s) => s.name === 'x402_channels')
    : undefined;
  const read = typeof channels?.from_block === 'number' ? channels.from_block : undefined;
  return recorded ?? read ?? BATCH_SETTLEMENT_DEPLOYMENT_BLOCK;
}

/**
 * The x402 settlement contracts of Base that method 3.0.0 reads: their canonical addresses, the
 * ABIs of the events the chain readers decode, and the topic0 of each of those events. The same
 * addresses hold the stand-ins on the local chain (src/devchain/x402-contracts.ts, which re-exports
 * these) and the real contracts on Base mainnet.
 *
 * Addresses and the proxies' ABIs come from `@x402/evm` 2.27.0 where it exports them; the rest (the
 * Permit2 deposit collector's address, the batch contract's events) from the x402 repository at
 * commit 84ffb6412a1f2f45a62971c5549eff794281c099 (contracts/evm/README.md, contracts/evm/src).
 * Sources and choices: docs/x402-contracts.md.
 */
import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm';
import { parseAbi, type Address, type Hex } from 'viem';

const lower = (a: string): Address => a.toLowerCase() as Address;

/**
 * `Permit2DepositCollector`, which `@x402/evm` 2.27.0 does not export: x402 repository,
 * contracts/evm/README.md at commit 84ffb6412a1f2f45a62971c5549eff794281c099.
 */
export const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020425faf3b746c082c2f942b4e5159887b0005';

/** The canonical addresses (lowercase), the same on Base mainnet and on the local node. */
export const X402_CONTRACTS = Object.freeze({
  permit2: lower(PERMIT2_ADDRESS),
  exactProxy: lower(x402ExactPermit2ProxyAddress),
  uptoProxy: lower(x402UptoPermit2ProxyAddress),
  batchSettlement: lower(BATCH_SETTLEMENT_ADDRESS),
  erc3009DepositCollector: lower(ERC3009_DEPOSIT_COLLECTOR_ADDRESS),
  permit2DepositCollector: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
});
export type X402ContractKey = keyof typeof X402_CONTRACTS;

/** The proxies' ABIs exactly as `@x402/evm` 2.27.0 exports them (events `Settled()`, `SettledWithPermit()`). */
export const exactProxyAbi = x402ExactPermit2ProxyABI;
export const uptoProxyAbi = x402UptoPermit2ProxyABI;

/**
 * The batch-settlement contract's events and the calls the tests make, as declared in
 * contracts/evm/src/x402BatchSettlement.sol at commit 84ffb6412a1f2f45a62971c5549eff794281c099
 * (`@x402/evm` 2.27.0 ships only `Settled` of these, and does not export it). Its `Settled` is the
 * contract's own sweep to a receiver, NOT the proxies' `Settled()`: select logs by address and topic0.
 */
export const batchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
  'event ChannelCreated(bytes32 indexed channelId, ChannelConfig config)',
  'event ChannelClosed(bytes32 indexed channelId, ChannelConfig config)',
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
  'event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'function deposit(ChannelConfig config, uint128 amount, address collector, bytes collectorData)',
  'function claim(VoucherClaim[] voucherClaims)',
  'function settle(address receiver, address token)',
  'function refund(ChannelConfig config, uint128 amount)',
  'function getChannelId(ChannelConfig config) view returns (bytes32)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
]);

/**
 * topic0 of every event the method selects, by contract. Written out so that SQL and docs can use
 * them; test/chain/x402-contracts-build.test.ts recomputes each with viem's toEventSelector.
 */
export const X402_TOPIC0 = Object.freeze({
  /** `Settled()` of both Permit2 proxies. */
  proxySettled: '0x97088ec3606cfe8cc112180570d03fcde05f9b8e1bfef8e27784eaf5dd5691b6',
  /** `SettledWithPermit()` of both Permit2 proxies. */
  proxySettledWithPermit: '0xde5b89d10fc800c459329c382fabfcad0be0ed7e5328e01fae04e507b09ef5d8',
  /** `ChannelCreated(bytes32,(address,address,address,address,address,uint40,bytes32))` of the batch contract. */
  batchChannelCreated: '0x69d8248d5566bdb2ebc4d218970710d8378a2ff9b709a999e052b71970f808fa',
  /** `ChannelClosed(bytes32,(address,address,address,address,address,uint40,bytes32))` of the batch contract. */
  batchChannelClosed: '0x8d5942f197f362dfd44dfdc1b0b7a9721c9151b67f55817c83349271d3c08d37',
  /** `Deposited(bytes32,address,uint128,uint128)` of the batch contract. */
  batchDeposited: '0x6c2a09353b5e75e70d0b9778b80a413809bb235d46c211811c474b3346791d89',
  /** `Claimed(bytes32,address,uint128,uint128)` of the batch contract. */
  batchClaimed: '0x36bd546bb573e8921fdbfd934bbed62d872796b01792cd240cce27f79dd3eddd',
  /** `Settled(address,address,address,uint128)` of the batch contract (not the proxies' `Settled()`). */
  batchSettled: '0x7337b4386b690fdb8ba66905b92b9d45d33bc6626ee2620c905fb150ec0cc47d',
  /** `Refunded(bytes32,address,uint128)` of the batch contract. */
  batchRefunded: '0xa84286cf8ebc7903a663c77c8d99aa92b600d4c2fcca872a5d4a663db4eb394b',
} satisfies Record<string, Hex>);

/**
 * The local development chain: an anvil node running Circle's USDC (FiatTokenV2_2 behind its
 * proxy) at the Base USDC address, settling payments exactly as an x402 facilitator does.
 * Used by tests, benchmarks and the `demo` command (offline).
 */
export { startAnvil, anvilBinaryPath, type AnvilInstance, type StartAnvilOptions } from './anvil.ts';
export {
  anvilAccount,
  buyerAccount,
  buyerPrivateKey,
  ANVIL_MNEMONIC,
  DEV_ROLES,
  FACILITATOR_INDEXES,
} from './accounts.ts';
export {
  deployUsdc,
  linkBytecode,
  PROXY_ADMIN_SLOT,
  PROXY_IMPLEMENTATION_SLOT,
  USDC_NAME,
  USDC_VERSION,
  type DeployUsdcOptions,
  type UsdcDeployment,
} from './usdc.ts';
export { fiatTokenAbi, transferWithAuthorizationTypes } from './usdc-abi.ts';
export {
  fund,
  minedTransfers,
  plainTransfer,
  randomNonce,
  sendMint,
  sendPlainTransfer,
  sendSettlement,
  settle,
  settlementCalldata,
  type MinedTransfer,
  type SentTransfer,
  type SettleParams,
} from './settle.ts';
export {
  ensureMulticall3,
  sendBatch,
  sendSettlementsInOneTransaction,
  MULTICALL3_ADDRESS,
  type BatchCall,
} from './multicall.ts';
export { inOneBlock, latestBlock, mine, setAutomine, setNextBlockTimestamp, type MinedBlock } from './blocks.ts';
export { devClients, TxSender, TransactionRevertedError, waitForReceipt, type DevClients } from './tx.ts';
export { catalogSellers, type CatalogSeller } from './economy-sellers.ts';
export { planEconomy, DEMO_BUYERS, HISTORY_SECONDS, type EconomyPlan, type SellerScenario } from './economy-plan.ts';
export {
  seedDemoEconomy,
  type DemoTransfer,
  type EconomySeller,
  type EconomySummary,
  type SeedOptions,
} from './economy.ts';
export { startDemoChain, readCatalogItems, DEMO_CATALOG_PATH, type DemoChain } from './demo-chain.ts';
export { DEMO_FARM_ADDRESS, DEMO_FARM_LISTINGS, demoCatalogItems } from './demo-catalog.ts';
export { createRng, type Rng } from './prng.ts';
export {
  batchSettlementAbi,
  exactProxyAbi,
  installX402Contracts,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_DEPOSIT_WITNESS_TYPES,
  STAND_IN_BUILD_PATH,
  STAND_IN_NAMES,
  standInBuild,
  uptoProxyAbi,
  X402_CONTRACTS,
  X402_TOPIC0,
  type StandInBuild,
  type X402ContractKey,
} from './x402-contracts.ts';
export {
  channelConfig,
  claimData,
  erc3009DepositData,
  permit2DepositData,
  type ChannelConfig,
} from './x402-batch-calls.ts';
export {
  isX402DemoSeller,
  X402_DEMO_SELLERS,
  X402_DEMO_TIME_OFFSET,
  x402DemoCatalogItems,
  X402DemoSeeder,
  type X402DemoClass,
  type X402DemoOutgoing,
  type X402DemoPayment,
  type X402DemoSummary,
} from './x402-economy.ts';

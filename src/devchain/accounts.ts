import { keccak256, stringToBytes, type Hex } from 'viem';
import { mnemonicToAccount, privateKeyToAccount, type LocalAccount } from 'viem/accounts';

/** anvil's default dev mnemonic: its first 10 accounts hold 10,000 ETH each on every fresh node. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/** Number of funded dev accounts anvil creates by default. */
export const ANVIL_ACCOUNT_COUNT = 10;

const devCache = new Map<number, LocalAccount>();

/** anvil dev account `index` (0..9), a local signer holding ETH for gas on every fresh node. */
export function anvilAccount(index: number): LocalAccount {
  if (!Number.isInteger(index) || index < 0 || index >= ANVIL_ACCOUNT_COUNT) {
    throw new RangeError(`anvil dev account index must be 0..${ANVIL_ACCOUNT_COUNT - 1}, got ${index}`);
  }
  let account = devCache.get(index);
  if (!account) {
    account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
    devCache.set(index, account);
  }
  return account;
}

/**
 * The roles of the local USDC deployment, each its own dev account: the proxy admin may not call
 * the token through its proxy (Circle's AdminUpgradeabilityProxy forbids it), so admin and owner
 * must differ; facilitators only pay gas, like an x402 facilitator's hot wallets.
 */
export const DEV_ROLES = Object.freeze({ deployer: 0, proxyAdmin: 1, owner: 2, minter: 3 });
/** Dev account indexes used as facilitators (transaction senders of settlements). */
export const FACILITATOR_INDEXES = Object.freeze([4, 5, 6, 7, 8, 9]);

/**
 * Private key of deterministic buyer `n` (n >= 0): keccak256 of the UTF-8 text
 * `x402-tally demo buyer <n>`. The same n gives the same key on every machine and run.
 */
export function buyerPrivateKey(n: number): Hex {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`buyer index must be an integer >= 0, got ${n}`);
  return keccak256(stringToBytes(`x402-tally demo buyer ${n}`));
}

const buyerCache = new Map<number, LocalAccount>();

/** Deterministic buyer `n` as a viem local account (it holds no ETH: it only signs). */
export function buyerAccount(n: number): LocalAccount {
  let account = buyerCache.get(n);
  if (!account) {
    account = privateKeyToAccount(buyerPrivateKey(n));
    buyerCache.set(n, account);
  }
  return account;
}

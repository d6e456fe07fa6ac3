import { randomBytes } from 'node:crypto';
import {
  encodeFunctionData,
  getAddress,
  maxUint256,
  parseEther,
  parseEventLogs,
  parseSignature,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { waitForReceipt } from './tx.ts';
import { fiatTokenAbi, transferWithAuthorizationTypes } from './usdc-abi.ts';
import { USDC_NAME, USDC_VERSION, type UsdcDeployment } from './usdc.ts';

export interface SettleParams {
  /**
   * The buyer: signs the EIP-3009 authorization; needs USDC, never ETH. Any signer works, e.g. a
   * stand-in for a contract wallet whose code (ERC-1271) accepts the signature.
   */
  from: Pick<LocalAccount, 'address' | 'signTypedData'>;
  to: Address;
  /** micro-USDC, > 0 */
  value: bigint;
  /** unix seconds; default 0 */
  validAfter?: bigint;
  /** unix seconds; default 2^256 - 1 */
  validBefore?: bigint;
  /** 32-byte authorization nonce; default random (pass one for reproducible runs) */
  nonce?: Hex;
  /** Which overload of transferWithAuthorization the facilitator calls; default 'vrs'. */
  form?: 'vrs' | 'bytes';
  /** Transaction sender; default the deployment's first facilitator. */
  facilitator?: LocalAccount;
}

/** A token movement submitted to the node (maybe not mined yet). */
export interface SentTransfer {
  hash: Hash;
  kind: 'settlement' | 'plain' | 'mint';
  /** lowercase; for a mint, the zero address (what the Transfer log says) */
  from: Address;
  /** lowercase */
  to: Address;
  /** micro-USDC */
  value: bigint;
  /** the EIP-3009 nonce of a settlement */
  authorizationNonce?: Hex;
}

/** A transfer as mined: its block and the index of its Transfer log. */
export interface MinedTransfer extends SentTransfer {
  blockNumber: bigint;
  blockHash: Hash;
  /** unix seconds */
  blockTimestamp: bigint;
  /** log index of the Transfer log in its block */
  logIndex: number;
}

const lower = (a: Address): Address => a.toLowerCase() as Address;

/** A 32-byte hex nonce from the OS random source (use explicit nonces where runs must repeat). */
export function randomNonce(): Hex {
  return `0x${randomBytes(32).toString('hex')}`;
}

/** The calldata of the facilitator's transferWithAuthorization call, signed by `params.from`. */
export async function settlementCalldata(
  dep: UsdcDeployment,
  params: SettleParams,
): Promise<{ data: Hex; nonce: Hex }> {
  if (params.value <= 0n) throw new RangeError('settle: value must be > 0');
  const message = {
    from: params.from.address,
    to: getAddress(params.to),
    value: params.value,
    validAfter: params.validAfter ?? 0n,
    validBefore: params.validBefore ?? maxUint256,
    nonce: params.nonce ?? randomNonce(),
  };
  const signature = await params.from.signTypedData({
    domain: {
      name: USDC_NAME,
      version: USDC_VERSION,
      chainId: dep.chainId,
      verifyingContract: getAddress(dep.address),
    },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const head = [
    message.from,
    message.to,
    message.value,
    message.validAfter,
    message.validBefore,
    message.nonce,
  ] as const;
  let data: Hex;
  if ((params.form ?? 'vrs') === 'bytes') {
    data = encodeFunctionData({
      abi: fiatTokenAbi,
      functionName: 'transferWithAuthorization',
      args: [...head, signature],
    });
  } else {
    const { r, s, v, yParity } = parseSignature(signature);
    const vNumber = v !== undefined ? Number(v) : yParity + 27;
    data = encodeFunctionData({
      abi: fiatTokenAbi,
      functionName: 'transferWithAuthorization',
      args: [...head, vNumber, r, s],
    });
  }
  return { data, nonce: message.nonce };
}

/** Submits a settlement (buyer signs, facilitator sends) without waiting for it to be mined. */
export async function sendSettlement(dep: UsdcDeployment, params: SettleParams): Promise<SentTransfer> {
  const { data, nonce } = await settlementCalldata(dep, params);
  const facilitator = params.facilitator ?? dep.roles.facilitators[0]!;
  const hash = await dep.sender.send(facilitator, { to: dep.address, data });
  return {
    hash,
    kind: 'settlement',
    from: lower(params.from.address),
    to: lower(params.to),
    value: params.value,
    authorizationNonce: nonce,
  };
}

/**
 * Settles one payment exactly as an x402 facilitator does (EIP-3009 transferWithAuthorization)
 * and waits for it (automine must be on). Throws TransactionRevertedError when the token rejects
 * it (replayed nonce, expired authorization, insufficient balance).
 */
export async function settle(dep: UsdcDeployment, params: SettleParams): Promise<MinedTransfer> {
  const [mined] = await minedTransfers(dep, [await sendSettlement(dep, params)]);
  return mined!;
}

/** Submits a plain ERC-20 `transfer` (no authorization: never revenue); tops up `from`'s gas ETH. */
export async function sendPlainTransfer(
  dep: UsdcDeployment,
  params: { from: LocalAccount; to: Address; value: bigint },
): Promise<SentTransfer> {
  const balance = await dep.clients.public.getBalance({ address: params.from.address });
  if (balance < parseEther('0.1'))
    await dep.clients.test.setBalance({ address: params.from.address, value: parseEther('1') });
  const data = encodeFunctionData({
    abi: fiatTokenAbi,
    functionName: 'transfer',
    args: [getAddress(params.to), params.value],
  });
  const hash = await dep.sender.send(params.from, { to: dep.address, data });
  return { hash, kind: 'plain', from: lower(params.from.address), to: lower(params.to), value: params.value };
}

/** A plain ERC-20 transfer, mined (automine on). */
export async function plainTransfer(
  dep: UsdcDeployment,
  params: { from: LocalAccount; to: Address; value: bigint },
): Promise<MinedTransfer> {
  const [mined] = await minedTransfers(dep, [await sendPlainTransfer(dep, params)]);
  return mined!;
}

/** Submits a mint of `value` micro-USDC to `to` by the deployment's minter. */
export async function sendMint(dep: UsdcDeployment, to: Address, value: bigint): Promise<SentTransfer> {
  const data = encodeFunctionData({ abi: fiatTokenAbi, functionName: 'mint', args: [getAddress(to), value] });
  const hash = await dep.sender.send(dep.roles.minter, { to: dep.address, data });
  return { hash, kind: 'mint', from: '0x0000000000000000000000000000000000000000', to: lower(to), value };
}

/** Mints `value` micro-USDC to `address` and waits for it (automine on). */
export async function fund(dep: UsdcDeployment, address: Address, value: bigint): Promise<MinedTransfer> {
  const [mined] = await minedTransfers(dep, [await sendMint(dep, address, value)]);
  return mined!;
}

/**
 * Waits for each sent transfer and returns it with its block and Transfer log index, in input
 * order. Several entries may share one transaction (see settleInOneTransaction): they are matched
 * to that transaction's Transfer logs in order. Throws if any transaction reverted.
 */
export async function minedTransfers(dep: UsdcDeployment, sent: readonly SentTransfer[]): Promise<MinedTransfer[]> {
  const byHash = new Map<
    Hash,
    { logIndex: number; blockNumber: bigint; blockHash: Hash; from: string; to: string; value: bigint }[]
  >();
  const timestamps = new Map<bigint, bigint>();
  const out: MinedTransfer[] = [];
  // Receipts first, a few at a time: thousands of sequential round trips would dominate seeding.
  const hashes = [...new Set(sent.map((s) => s.hash))];
  for (let i = 0; i < hashes.length; i += 32) {
    const receipts = await Promise.all(hashes.slice(i, i + 32).map((hash) => waitForReceipt(dep.clients.public, hash)));
    for (const receipt of receipts) {
      byHash.set(
        receipt.transactionHash,
        parseEventLogs({ abi: fiatTokenAbi, eventName: 'Transfer', logs: receipt.logs })
          .filter((log) => lower(log.address) === dep.address)
          .map((log) => ({
            logIndex: log.logIndex,
            blockNumber: log.blockNumber,
            blockHash: log.blockHash,
            from: log.args.from.toLowerCase(),
            to: log.args.to.toLowerCase(),
            value: log.args.value,
          })),
      );
    }
  }
  for (const item of sent) {
    const logs = byHash.get(item.hash)!;
    const index = logs.findIndex((l) => l.from === item.from && l.to === item.to && l.value === item.value);
    if (index < 0) throw new Error(`minedTransfers: no matching Transfer log in ${item.hash}`);
    const [log] = logs.splice(index, 1);
    let blockTimestamp = timestamps.get(log!.blockNumber);
    if (blockTimestamp === undefined) {
      blockTimestamp = (await dep.clients.public.getBlock({ blockNumber: log!.blockNumber })).timestamp;
      timestamps.set(log!.blockNumber, blockTimestamp);
    }
    out.push({
      ...item,
      blockNumber: log!.blockNumber,
      blockHash: log!.blockHash,
      blockTimestamp,
      logIndex: log!.logIndex,
    });
  }
  return out;
}

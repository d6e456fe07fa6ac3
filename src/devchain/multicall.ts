import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { encodeFunctionData, getAddress, multicall3Abi, type Address, type Hex } from 'viem';
import { waitForReceipt } from './tx.ts';
import { settlementCalldata, type SentTransfer, type SettleParams } from './settle.ts';
import { fiatTokenAbi } from './usdc-abi.ts';
import type { UsdcDeployment } from './usdc.ts';

const lower = (a: Address): Address => a.toLowerCase() as Address;

/** Where Multicall3 lives on Base and most EVM chains. */
export const MULTICALL3_ADDRESS: Address = '0xca11bde05977b3631167028862be2a173976ca11';

/**
 * Multicall3's creation code. viem ships it (for deployless multicall) but does not export it,
 * so it is read from viem's installed files; no other installed package carries it.
 */
function multicall3CreationCode(): Hex {
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve('viem/package.json')), '_esm/constants/contracts.js');
  const match = /multicall3Bytecode = '(0x[0-9a-f]+)'/.exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error('ensureMulticall3: Multicall3 creation code not found in the installed viem');
  return match[1] as Hex;
}

/**
 * Installs Multicall3 (viem's copy of its creation code) at its canonical address unless code is
 * already there. Safe to call again.
 */
export async function ensureMulticall3(dep: UsdcDeployment): Promise<Address> {
  const existing = await dep.clients.public.getCode({ address: MULTICALL3_ADDRESS });
  if (existing && existing !== '0x') return MULTICALL3_ADDRESS;
  const hash = await dep.sender.send(dep.roles.deployer, { data: multicall3CreationCode(), gas: 3_000_000n });
  const receipt = await waitForReceipt(dep.clients.public, hash);
  const code = await dep.clients.public.getCode({ address: receipt.contractAddress! });
  await dep.clients.test.setCode({ address: MULTICALL3_ADDRESS, bytecode: code! });
  return MULTICALL3_ADDRESS;
}

/** One call inside a Multicall3 batch: a settlement, or a transfer of Multicall3's own USDC. */
export type BatchCall = { settle: SettleParams } | { batcherTransfer: { to: Address; value: bigint } };

/**
 * Submits several calls in ONE transaction: a facilitator batching through Multicall3's
 * aggregate3 (transferWithAuthorization does not check msg.sender, so this is valid). A
 * `batcherTransfer` is Multicall3 moving its own USDC (mint to MULTICALL3_ADDRESS first): a
 * Transfer whose sender authorized nothing, beside authorizations of others. All calls succeed
 * or the transaction reverts. Returns one SentTransfer per call, all with the same hash; pass
 * them to minedTransfers to get their log indexes.
 */
export async function sendBatch(
  dep: UsdcDeployment,
  calls: readonly BatchCall[],
  options: { facilitator?: SettleParams['facilitator'] } = {},
): Promise<SentTransfer[]> {
  if (calls.length === 0) throw new RangeError('sendBatch: no calls');
  await ensureMulticall3(dep);
  const encoded = await Promise.all(
    calls.map(async (call): Promise<{ data: Hex; sent: Omit<SentTransfer, 'hash'> }> => {
      if ('settle' in call) {
        const { data, nonce } = await settlementCalldata(dep, call.settle);
        const s = call.settle;
        return {
          data,
          sent: {
            kind: 'settlement',
            from: lower(s.from.address),
            to: lower(s.to),
            value: s.value,
            authorizationNonce: nonce,
          },
        };
      }
      const { to, value } = call.batcherTransfer;
      const data = encodeFunctionData({ abi: fiatTokenAbi, functionName: 'transfer', args: [getAddress(to), value] });
      return { data, sent: { kind: 'plain', from: MULTICALL3_ADDRESS, to: lower(to), value } };
    }),
  );
  const data = encodeFunctionData({
    abi: multicall3Abi,
    functionName: 'aggregate3',
    args: [encoded.map((e) => ({ target: dep.address, allowFailure: false, callData: e.data }))],
  });
  const facilitator = options.facilitator ?? dep.roles.facilitators[0]!;
  const hash = await dep.sender.send(facilitator, {
    to: MULTICALL3_ADDRESS,
    data,
    gas: 200_000n * BigInt(calls.length),
  });
  return encoded.map((e) => ({ hash, ...e.sent }));
}

/** Several settlements in ONE transaction (see sendBatch). */
export async function sendSettlementsInOneTransaction(
  dep: UsdcDeployment,
  settlements: readonly SettleParams[],
  options: { facilitator?: SettleParams['facilitator'] } = {},
): Promise<SentTransfer[]> {
  return sendBatch(
    dep,
    settlements.map((settle) => ({ settle })),
    options,
  );
}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { encodeFunctionData, multicall3Abi, type Address, type Hex } from 'viem';
import { waitForReceipt } from './tx.ts';
import { settlementCalldata, type SentTransfer, type SettleParams } from './settle.ts';
import type { UsdcDeployment } from './usdc.ts';

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

/**
 * Submits several settlements in ONE transaction (a facilitator batching through Multicall3's
 * aggregate3; transferWithAuthorization does not check msg.sender, so this is valid). All succeed
 * or the transaction reverts. Returns one SentTransfer per settlement, all with the same hash;
 * pass them to minedTransfers to get their log indexes.
 */
export async function sendSettlementsInOneTransaction(
  dep: UsdcDeployment,
  settlements: readonly SettleParams[],
  options: { facilitator?: SettleParams['facilitator'] } = {},
): Promise<SentTransfer[]> {
  if (settlements.length === 0) throw new RangeError('sendSettlementsInOneTransaction: no settlements');
  await ensureMulticall3(dep);
  const encoded = await Promise.all(settlements.map((s) => settlementCalldata(dep, s)));
  const data = encodeFunctionData({
    abi: multicall3Abi,
    functionName: 'aggregate3',
    args: [encoded.map((e) => ({ target: dep.address, allowFailure: false, callData: e.data }))],
  });
  const facilitator = options.facilitator ?? dep.roles.facilitators[0]!;
  const hash = await dep.sender.send(facilitator, {
    to: MULTICALL3_ADDRESS,
    data,
    gas: 200_000n * BigInt(settlements.length),
  });
  return settlements.map((s, i) => ({
    hash,
    kind: 'settlement' as const,
    from: s.from.address.toLowerCase() as Address,
    to: s.to.toLowerCase() as Address,
    value: s.value,
    authorizationNonce: encoded[i]!.nonce,
  }));
}

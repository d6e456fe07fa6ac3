import {
  decodeFunctionData,
  encodeAbiParameters,
  getAddress,
  hashTypedData,
  keccak256,
  parseEventLogs,
  recoverAddress,
  stringToBytes,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buyerAccount,
  buyerPrivateKey,
  deployUsdc,
  fiatTokenAbi,
  fund,
  inOneBlock,
  latestBlock,
  mine,
  minedTransfers,
  PROXY_ADMIN_SLOT,
  PROXY_IMPLEMENTATION_SLOT,
  plainTransfer,
  sendSettlement,
  sendSettlementsInOneTransaction,
  setNextBlockTimestamp,
  settle,
  startAnvil,
  TransactionRevertedError,
  waitForReceipt,
  type AnvilInstance,
  type UsdcDeployment,
} from './index.ts';
import { BASE_USDC } from '../config/index.ts';

const GENESIS = 1_760_000_000n;
const SELLER: Address = '0x5e11e5e11e5e11e5e11e5e11e5e11e5e11e5e11e';
const OTHER_SELLER: Address = '0x0000000000000000000000000000000000c0ffee';

let anvil: AnvilInstance;
let dep: UsdcDeployment;

beforeAll(async () => {
  anvil = await startAnvil({ timestamp: GENESIS });
  dep = await deployUsdc(anvil.url);
  for (const n of [0, 1, 2]) await fund(dep, buyerAccount(n).address, 1_000_000_000n);
});

afterAll(async () => {
  await anvil?.stop();
});

const read = () => dep.clients.public;
const balanceOf = (address: Address) =>
  read().readContract({ address: BASE_USDC, abi: fiatTokenAbi, functionName: 'balanceOf', args: [address] });
// Waits: a transaction sent with automine on may not have its receipt yet under load (CI saw
// TransactionReceiptNotFoundError once on 2026-11-27).
const receipt = (hash: Hex) => waitForReceipt(read(), hash, { allowRevert: true });
function tokenEvents(r: TransactionReceipt) {
  const logs = r.logs.filter((l) => l.address.toLowerCase() === BASE_USDC);
  return {
    transfers: parseEventLogs({ abi: fiatTokenAbi, eventName: 'Transfer', logs }),
    used: parseEventLogs({ abi: fiatTokenAbi, eventName: 'AuthorizationUsed', logs }),
  };
}

describe('devchain', () => {
  it('default: USDC is served at the real Base address with its EIP-712 domain', async () => {
    const call = <F extends 'name' | 'symbol' | 'decimals' | 'currency' | 'version' | 'DOMAIN_SEPARATOR'>(
      functionName: F,
    ) => read().readContract({ address: BASE_USDC, abi: fiatTokenAbi, functionName });
    expect(dep.address).toBe(BASE_USDC);
    expect(await read().getChainId()).toBe(8453);
    expect(await call('name')).toBe('USD Coin');
    expect(await call('symbol')).toBe('USDC');
    expect(await call('decimals')).toBe(6);
    expect(await call('currency')).toBe('USD');
    expect(await call('version')).toBe('2');
    // EIP-712 domain separator of USDC on Base, computed from its definition.
    const domainTypeHash = keccak256(
      stringToBytes('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
    );
    const expected = keccak256(
      encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'address' }],
        [
          domainTypeHash,
          keccak256(stringToBytes('USD Coin')),
          keccak256(stringToBytes('2')),
          8453n,
          getAddress(BASE_USDC),
        ],
      ),
    );
    expect(await call('DOMAIN_SEPARATOR')).toBe(expected);
  });

  it('default: the proxy at the Base address points at the deployed implementation, admin is the proxy admin', async () => {
    expect(PROXY_IMPLEMENTATION_SLOT).toBe(keccak256(stringToBytes('org.zeppelinos.proxy.implementation')));
    expect(PROXY_ADMIN_SLOT).toBe(keccak256(stringToBytes('org.zeppelinos.proxy.admin')));
    const impl = await read().getStorageAt({ address: BASE_USDC, slot: PROXY_IMPLEMENTATION_SLOT });
    const admin = await read().getStorageAt({ address: BASE_USDC, slot: PROXY_ADMIN_SLOT });
    expect(`0x${impl!.slice(-40)}`).toBe(dep.implementation);
    expect(`0x${admin!.slice(-40)}`).toBe(dep.roles.proxyAdmin.address.toLowerCase());
    expect((await read().getCode({ address: dep.implementation }))!.length).toBeGreaterThan(10_000);
  });

  it.each(['vrs', 'bytes'] as const)(
    'behavior: a %s settlement emits Transfer + AuthorizationUsed(buyer) and moves the exact value',
    async (form) => {
      const buyer = buyerAccount(0);
      const nonce = keccak256(stringToBytes(`test nonce ${form}`));
      const [buyerBefore, sellerBefore] = [await balanceOf(buyer.address), await balanceOf(SELLER)];
      const mined = await settle(dep, { from: buyer, to: SELLER, value: 12_345n, nonce, form });

      const r = await receipt(mined.hash);
      expect(r.status).toBe('success');
      expect(r.from.toLowerCase()).toBe(dep.roles.facilitators[0]!.address.toLowerCase());
      const { transfers, used } = tokenEvents(r);
      expect(transfers.map((t) => [t.args.from.toLowerCase(), t.args.to.toLowerCase(), t.args.value])).toEqual([
        [buyer.address.toLowerCase(), SELLER, 12_345n],
      ]);
      expect(used.map((u) => [u.args.authorizer.toLowerCase(), u.args.nonce])).toEqual([
        [buyer.address.toLowerCase(), nonce],
      ]);
      expect(mined.logIndex).toBe(transfers[0]!.logIndex);
      expect(mined.blockNumber).toBe(r.blockNumber);
      expect(await balanceOf(buyer.address)).toBe(buyerBefore - 12_345n);
      expect(await balanceOf(SELLER)).toBe(sellerBefore + 12_345n);
      expect(
        await read().readContract({
          address: BASE_USDC,
          abi: fiatTokenAbi,
          functionName: 'authorizationState',
          args: [buyer.address, nonce],
        }),
      ).toBe(true);
    },
  );

  it('behavior: the buyer signs the EIP-3009 typed data a wallet would sign', async () => {
    const buyer = buyerAccount(1);
    const message = {
      from: buyer.address,
      to: getAddress(SELLER),
      value: 1n,
      validAfter: 0n,
      validBefore: 10n ** 12n,
      nonce: keccak256(stringToBytes('typed')),
    };
    const digest = hashTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: getAddress(BASE_USDC) },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const sent = await sendSettlement(dep, { ...message, from: buyer, form: 'bytes' });
    const tx = await read().getTransaction({ hash: sent.hash });
    const decoded = decodeFunctionData({ abi: fiatTokenAbi, data: tx.input });
    const signature = decoded.args[decoded.args.length - 1] as Hex;
    expect(await recoverAddress({ hash: digest, signature })).toBe(buyer.address);
    await minedTransfers(dep, [sent]);
  });

  it('error: a replayed authorization (same nonce) reverts and moves nothing', async () => {
    const buyer = buyerAccount(0);
    const nonce = keccak256(stringToBytes('replayed'));
    await settle(dep, { from: buyer, to: SELLER, value: 5_000n, nonce });
    const [buyerBefore, sellerBefore] = [await balanceOf(buyer.address), await balanceOf(SELLER)];
    await expect(settle(dep, { from: buyer, to: SELLER, value: 5_000n, nonce })).rejects.toBeInstanceOf(
      TransactionRevertedError,
    );
    expect(await balanceOf(buyer.address)).toBe(buyerBefore);
    expect(await balanceOf(SELLER)).toBe(sellerBefore);
  });

  it('behavior: a plain transfer emits Transfer without AuthorizationUsed', async () => {
    const buyer = buyerAccount(2);
    const sellerBefore = await balanceOf(OTHER_SELLER);
    const mined = await plainTransfer(dep, { from: buyer, to: OTHER_SELLER, value: 777n });
    const { transfers, used } = tokenEvents(await receipt(mined.hash));
    expect(transfers.map((t) => [t.args.from.toLowerCase(), t.args.to.toLowerCase(), t.args.value])).toEqual([
      [buyer.address.toLowerCase(), OTHER_SELLER, 777n],
    ]);
    expect(used).toEqual([]);
    expect(await balanceOf(OTHER_SELLER)).toBe(sellerBefore + 777n);
  });

  it('behavior: settlements sent inside inOneBlock share one block at the requested timestamp', async () => {
    const before = await latestBlock(anvil.url);
    const ts = before.timestamp + 1_000n;
    const { result, block } = await inOneBlock(
      anvil.url,
      async () => [
        await sendSettlement(dep, { from: buyerAccount(0), to: SELLER, value: 1_000n }),
        await sendSettlement(dep, {
          from: buyerAccount(1),
          to: OTHER_SELLER,
          value: 2_000n,
          facilitator: dep.roles.facilitators[1],
        }),
      ],
      { timestamp: ts },
    );
    const receipts = await Promise.all(result.map((s) => receipt(s.hash)));
    expect(receipts.map((r) => r.blockNumber)).toEqual([before.number + 1n, before.number + 1n]);
    expect(block.number).toBe(before.number + 1n);
    expect((await read().getBlock({ blockNumber: block.number })).timestamp).toBe(ts);
    const mined = await minedTransfers(dep, result);
    expect(mined.map((m) => [m.blockTimestamp, m.value])).toEqual([
      [ts, 1_000n],
      [ts, 2_000n],
    ]);
    expect(mined[0]!.logIndex).toBeLessThan(mined[1]!.logIndex);
  });

  it('behavior: several settlements in ONE transaction each carry their own AuthorizationUsed', async () => {
    const sent = await sendSettlementsInOneTransaction(dep, [
      { from: buyerAccount(0), to: SELLER, value: 3_000n },
      { from: buyerAccount(1), to: SELLER, value: 4_000n, form: 'bytes' },
    ]);
    expect(new Set(sent.map((s) => s.hash)).size).toBe(1);
    const { transfers, used } = tokenEvents(await receipt(sent[0]!.hash));
    expect(transfers.map((t) => [t.args.from.toLowerCase(), t.args.value])).toEqual([
      [buyerAccount(0).address.toLowerCase(), 3_000n],
      [buyerAccount(1).address.toLowerCase(), 4_000n],
    ]);
    expect(used.map((u) => [u.args.authorizer.toLowerCase(), u.args.nonce])).toEqual(
      sent.map((s) => [s.from, s.authorizationNonce]),
    );
  });

  it('behavior: setNextBlockTimestamp and mine with an interval build a history longer than 31 days', async () => {
    const start = (await latestBlock(anvil.url)).timestamp + 10n;
    await setNextBlockTimestamp(anvil.url, start);
    await mine(anvil.url, 1);
    const first = await latestBlock(anvil.url);
    // The wall clock moves on between the two calls (here on purpose, on a loaded machine by
    // itself): the interval must count from the previous block, not from the clock.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await mine(anvil.url, 33, 86_400);
    const last = await latestBlock(anvil.url);
    expect(first.timestamp).toBe(start);
    expect(last.number - first.number).toBe(33n);
    expect(last.timestamp - first.timestamp).toBe(33n * 86_400n);
  });

  it('args: buyer keys are keccak256 of "x402-tally demo buyer N", distinct per N', () => {
    expect(buyerPrivateKey(7)).toBe(keccak256(stringToBytes('x402-tally demo buyer 7')));
    expect(buyerAccount(3).address).not.toBe(buyerAccount(4).address);
    expect(() => buyerPrivateKey(-1)).toThrow(RangeError);
  });
});

describe('startAnvil', () => {
  it('behavior: stop() ends the node (its URL stops answering) and is safe to repeat', async () => {
    const node = await startAnvil({ chainId: 31337 });
    const ask = () =>
      fetch(node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
    expect(((await (await ask()).json()) as { result: string }).result).toBe('0x7a69');
    await node.stop();
    await node.stop();
    await expect(ask()).rejects.toThrow();
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { toEventSelector, toFunctionSelector, type Abi, type AbiEvent, type AbiFunction } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  batchSettlementAbi,
  exactProxyAbi,
  STAND_IN_BUILD_PATH,
  STAND_IN_NAMES,
  standInBuild,
  uptoProxyAbi,
  X402_TOPIC0,
} from '../../src/devchain/index.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { buildText, compileStandIns } from '../../scripts/compile-contracts.ts';

/**
 * The committed bytecode of the x402 stand-ins is what the pinned solc makes of the committed
 * sources, and their ABIs carry the published functions and events (those `@x402/evm` 2.27.0 ships
 * for the proxies, those of the x402 repository for the batch contract).
 */

const events = (abi: Abi) => abi.filter((i): i is AbiEvent => i.type === 'event');
const functions = (abi: Abi) => abi.filter((i): i is AbiFunction => i.type === 'function');
const eventSelectors = (abi: Abi) => new Set(events(abi).map((e) => toEventSelector(e)));
const functionSelectors = (abi: Abi) => new Set(functions(abi).map((f) => toFunctionSelector(f)));
const standIn = (name: string) => {
  const contract = standInBuild().contracts[name];
  if (!contract) throw new Error(`${name} is not in build.json`);
  return contract;
};

describe('x402 stand-in contracts: build', () => {
  it('default: solc is pinned to one exact version, the one build.json was made with', () => {
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const pinned = pkg.devDependencies.solc;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(standInBuild().compiler.startsWith(`${pinned}+commit.`)).toBe(true);
  });

  // solc-js (a WebAssembly compiler) takes about 10 s on an idle machine and about 60 s on a loaded one.
  it('behavior: recompiling the sources gives build.json byte for byte', { timeout: 300_000 }, () => {
    const fresh = compileStandIns();
    const committed = standInBuild();
    expect(Object.keys(fresh.contracts).sort()).toEqual(Object.keys(committed.contracts).sort());
    for (const [name, contract] of Object.entries(fresh.contracts)) {
      expect(contract.deployedBytecode, name).toBe(committed.contracts[name]!.deployedBytecode);
      expect(contract.bytecode, name).toBe(committed.contracts[name]!.bytecode);
    }
    expect(buildText(fresh)).toBe(readFileSync(STAND_IN_BUILD_PATH, 'utf8'));
  });

  it('default: every canonical address has a stand-in with code', () => {
    for (const name of Object.values(STAND_IN_NAMES)) expect(standIn(name).deployedBytecode.length).toBeGreaterThan(2);
  });

  it('behavior: the proxy stand-ins have every function and event of the ABIs @x402/evm ships', () => {
    const pairs: [Abi, string][] = [
      [exactProxyAbi as Abi, STAND_IN_NAMES.exactProxy],
      [uptoProxyAbi as Abi, STAND_IN_NAMES.uptoProxy],
    ];
    for (const [published, name] of pairs) {
      const ours = standIn(name).abi;
      for (const selector of functionSelectors(published)) expect(functionSelectors(ours), name).toContain(selector);
      for (const selector of eventSelectors(published)) expect(eventSelectors(ours), name).toContain(selector);
    }
  });

  it('behavior: the batch stand-in has every event and call of the x402 repository interface we use', () => {
    const ours = standIn(STAND_IN_NAMES.batchSettlement).abi;
    expect(eventSelectors(batchSettlementAbi)).toEqual(eventSelectors(ours));
    for (const selector of functionSelectors(batchSettlementAbi)) expect(functionSelectors(ours)).toContain(selector);
  });

  it('behavior: the topic0 constants are the selectors of the published event signatures', () => {
    const config = '(address,address,address,address,address,uint40,bytes32)';
    const expected: Record<keyof typeof X402_TOPIC0, string> = {
      proxySettled: 'Settled()',
      proxySettledWithPermit: 'SettledWithPermit()',
      batchChannelCreated: `ChannelCreated(bytes32,${config})`,
      batchChannelClosed: `ChannelClosed(bytes32,${config})`,
      batchDeposited: 'Deposited(bytes32,address,uint128,uint128)',
      batchClaimed: 'Claimed(bytes32,address,uint128,uint128)',
      batchSettled: 'Settled(address,address,address,uint128)',
      batchRefunded: 'Refunded(bytes32,address,uint128)',
    };
    for (const [key, signature] of Object.entries(expected)) {
      expect(X402_TOPIC0[key as keyof typeof X402_TOPIC0], key).toBe(toEventSelector(signature));
    }
    // SPEC quotes the first bytes of Claimed's topic0.
    expect(X402_TOPIC0.batchClaimed.startsWith('0x36bd546b')).toBe(true);
    // The same constants from the ABIs as shipped (proxies) and as declared (batch contract).
    const byName = (abi: Abi, name: string) => toEventSelector(events(abi).find((e) => e.name === name)!);
    expect(byName(exactProxyAbi as Abi, 'Settled')).toBe(X402_TOPIC0.proxySettled);
    expect(byName(uptoProxyAbi as Abi, 'SettledWithPermit')).toBe(X402_TOPIC0.proxySettledWithPermit);
    expect(byName(batchSettlementAbi, 'Settled')).toBe(X402_TOPIC0.batchSettled);
    expect(byName(batchSettlementAbi, 'ChannelCreated')).toBe(X402_TOPIC0.batchChannelCreated);
  });

  it('edge: the batch contract Settled is not the proxies Settled()', () => {
    expect(X402_TOPIC0.batchSettled).not.toBe(X402_TOPIC0.proxySettled);
  });
});

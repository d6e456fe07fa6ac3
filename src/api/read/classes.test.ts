import { describe, expect, it } from 'vitest';
import { X402_CONTRACTS } from '../../chain/x402.ts';
import { deploymentBlockOf, hasClasses, X402_INFRASTRUCTURE } from './classes.ts';

describe('method 3.0.0 classes in the API', () => {
  it('default: classes and external revenue belong to method 3.x generations only', () => {
    expect(
      ['1.0.0', '2.0.0', '2.9.1', '3.0.0', '3.1.0', '10.0.0'].map((v) => hasClasses({ method_version: v })),
    ).toEqual([false, false, false, true, true, true]);
  });

  it('behavior: the x402 infrastructure is the six contracts the chain readers know (SPEC lists six)', () => {
    expect([...X402_INFRASTRUCTURE].sort()).toEqual(Object.values(X402_CONTRACTS).sort());
    expect(new Set(X402_INFRASTRUCTURE).size).toBe(6);
    expect(X402_INFRASTRUCTURE).toContain('0x000000000022d473030f116ddee9f6b43ac78ba3'); // Permit2, as SPEC writes it
    expect(X402_INFRASTRUCTURE).toContain('0x4020806089470a89826cb9fb1f4059150b550004'); // ERC-3009 deposit collector
  });

  it("behavior: the deployment block a generation recorded wins over Base's documented one (40218126)", () => {
    expect(deploymentBlockOf({ constants: { batch_settlement_deployment_block: 31_000_000 } })).toBe(31_000_000);
    // (docs/METHOD.md 2.11: a lower bound of the deployment, Base block 40218126, about 2026-01-01)
    expect(deploymentBlockOf({ constants: { chain_id: 8453 } })).toBe(40_218_126);
    // else the block the run read ChannelCreated from (a local chain: 0)
    expect(deploymentBlockOf({ constants: {}, sources: [{ name: 'x402_channels', from_block: 0 }] })).toBe(0);
    expect(deploymentBlockOf({ constants: {}, sources: [{ name: 'x402_channels', from_block: 17 }] })).toBe(17);
  });
});

import { toEventSelector } from 'viem';
import type { Hex } from './types.ts';

/** topic0 of `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)') as Hex;
/** topic0 of `AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)` (EIP-3009). */
export const AUTHORIZATION_USED_TOPIC = toEventSelector('AuthorizationUsed(address,bytes32)') as Hex;

/** An address as a 32-byte topic (left-padded with zeros), lowercase. */
export function addressTopic(address: string): Hex {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
}

/** The address in a 32-byte topic, or undefined when the upper 12 bytes are not zero. */
export function topicAddress(topic: string): Hex | undefined {
  if (!topic.startsWith('0x000000000000000000000000')) return undefined;
  return `0x${topic.slice(26).toLowerCase()}`;
}

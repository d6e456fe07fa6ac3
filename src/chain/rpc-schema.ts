import { z } from 'zod';

/**
 * The JSON-RPC shapes we read, as providers really send them: quantities in hex (`0x1a`),
 * addresses in any case, hashes as 32-byte hex. Unknown fields are ignored; the non-standard
 * `blockTimestamp` some providers add to logs is optional.
 */
const quantity = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, 'hex quantity');
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, '32-byte hex');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, '20-byte hex');
const data = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'hex data');

export const RpcLogSchema = z.object({
  address,
  topics: z.array(hash),
  data,
  blockNumber: quantity,
  blockHash: hash,
  transactionHash: hash,
  logIndex: quantity,
  removed: z.boolean().optional(),
  blockTimestamp: quantity.optional(),
});
export type RpcLog = z.infer<typeof RpcLogSchema>;

export const RpcBlockSchema = z.object({
  number: quantity,
  hash: hash,
  parentHash: hash,
  timestamp: quantity,
});

import { z } from 'zod';
import { CATEGORIES } from '../../lib/categories.ts';

/**
 * Building blocks of the API schemas. These zod schemas are the single source of the request
 * validation, the response serialisation and the OpenAPI document (./openapi.ts): a schema
 * registered in `components` becomes `#/components/schemas/<id>` there.
 */
export const components = z.registry<{ id: string; description?: string }>();

/**
 * Micro-USDC as a bigint: written as a bare JSON integer, exact above 2^53 - 1 (see ../json.ts).
 * The OpenAPI document shows it as `type: integer, minimum: 0` (see the override in openapi.ts).
 */
export const Micro = z
  .bigint()
  .nonnegative()
  .meta({ description: 'micro-USDC (1 USDC = 1000000); an exact JSON integer, may exceed 2^53 - 1' });

/** A block number or another chain integer that the database hands over as bigint. */
export const ChainInt = z.bigint().nonnegative().meta({ description: 'a non-negative integer' });

export const Address = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/)
  .meta({ description: '0x + 40 lowercase hex digits' });
export const Hex64 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .meta({ description: '64 lowercase hex digits' });
export const TxHash = z
  .string()
  .regex(/^0x[0-9a-f]{64}$/)
  .meta({ description: '0x + 64 lowercase hex digits' });
export const Iso = z.iso.datetime().meta({ description: 'UTC time, ISO 8601' });
export const Count = z.int().nonnegative();

export const Category = z.enum(CATEGORIES);
components.add(Category, { id: 'Category' });

export const Window = z.strictObject({
  start: Iso.meta({ description: 'as_of.timestamp - window seconds (exclusive)' }),
  end: Iso.meta({ description: 'as_of.timestamp (inclusive)' }),
});
components.add(Window, { id: 'Window' });

export const ErrorBody = z.strictObject({
  error: z.strictObject({
    code: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .meta({ description: 'stable snake_case code' }),
    message: z.string().meta({ description: 'human text: what was wrong and, for a 400, which parameter' }),
  }),
});
components.add(ErrorBody, { id: 'Error' });

/** The generation a body was read from, and the method that computed it: the first fields of most bodies. */
export const Snapshot = { generation: z.int().positive(), method_version: z.string() };
export const NextCursor = Hex64.nullable().meta({
  description: 'pass as `cursor` to get the next page; null on the last page',
});

// Registered here, after Error and before the bodies (./directory.ts, ./responses.ts, ./groups.ts),
// so the OpenAPI document lists the components in the order it always has.
/** Method 3.0.0's evidence classes, in the order of its per-class figures. */
export const EvidenceClass = z.enum(['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement']);
components.add(EvidenceClass, { id: 'EvidenceClass' });
/** Why a payment is internal (method 3.0.0); null on an external payment. */
export const InternalReason = z.enum(['seller_funded', 'same_operator']);
components.add(InternalReason, { id: 'InternalReason' });

import { z } from 'zod';

/**
 * The types of the fields the method reads from a discovery item and its accepts. A field that is
 * absent or null is "not given"; a field present with another type rejects the item (or the
 * accept) with reason `wrong_type`. Fields the method does not read are not checked, and the item
 * is kept whole (looseObject) for the snapshot.
 */
const text = z.string().nullish();

export const ItemSchema = z.looseObject({
  x402Version: z.number().nullish(),
  type: text,
  resource: z
    .union([z.string(), z.looseObject({ url: text, description: text })], {
      error: 'expected a URL string or an object {url, description}',
    })
    .nullish(),
  accepts: z.array(z.unknown()).nullish(),
  lastUpdated: z.union([z.string(), z.number()]).nullish(),
  description: text,
  serviceName: text,
  tags: z.array(z.string()).nullish(),
  metadata: z.looseObject({ title: text, name: text, description: text, category: text }).nullish(),
  extensions: z
    .looseObject({
      bazaar: z.looseObject({ info: z.looseObject({ title: text, category: text }).nullish() }).nullish(),
    })
    .nullish(),
});
export type ItemShape = z.output<typeof ItemSchema>;

// The amount is not typed here: "not a string of decimal digits" has its own reason.
export const AcceptSchema = z.looseObject({
  network: text,
  payTo: text,
  asset: text,
  description: text,
  amount: z.unknown().optional(),
  maxAmountRequired: z.unknown().optional(),
});
export type AcceptShape = z.output<typeof AcceptSchema>;

/** "field.path: expected string, got number" for the first type problem zod found. */
export function describeTypeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}: wrong type`;
  const where = [prefix, ...issue.path.map(String)].join('.');
  return `${where}: ${issue.message}`;
}

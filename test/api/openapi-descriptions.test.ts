import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.ts';

type Property = { description?: string; format?: string; type?: string };
const properties = (schema: string) =>
  (openApiDocument() as { components: { schemas: Record<string, { properties: Record<string, Property> }> } })
    .components.schemas[schema]!.properties;

describe('OpenAPI descriptions say what is served', () => {
  it('default: PeriodDigest.period_start is an ISO time, its unix twin says unix seconds (issue 23)', () => {
    const digest = properties('PeriodDigest');
    expect(digest.period_start).toMatchObject({ type: 'string', format: 'date-time' });
    expect(digest.period_start!.description).not.toMatch(/unix/i);
    expect(digest.period_start!.description).toMatch(/^start of the period \(UTC\)/);
    expect(digest.period_start_unix!.description).toMatch(/unix seconds/);
  });
});

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationList } from '@/server/operations';
import { integerParam, integerParamWithDefault, jsonSchemaOf } from '@/server/numbers';

type JsonSchema = { properties?: Record<string, { description?: string }> };

// The JSON Schema the OpenAPI document and the CLI's generated commands read (server/numbers.ts).
const propertiesOf = (schema: z.ZodType | undefined): [string, { description?: string }][] =>
  Object.entries(schema ? ((jsonSchemaOf(schema, 'input') as JsonSchema).properties ?? {}) : {});

const undescribed = (entries: [string, { description?: string }][]) =>
  entries.filter(([, property]) => !property.description?.trim()).map(([name]) => name);

describe('input descriptions (OpenAPI parameters and fields, CLI --help)', () => {
  it('every query parameter of every operation has a description', () => {
    const missing = operationList.flatMap((op) =>
      undescribed(propertiesOf(op.query)).map((name) => `${op.id}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('every top-level body field has a description (ids ending in Id get "The x id." from the CLI)', () => {
    const missing = operationList.flatMap((op) =>
      undescribed(propertiesOf(op.body))
        .filter((name) => !name.endsWith('Id'))
        .map((name) => `${op.id}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  it('describing an integer parameter keeps how it is documented (an integer with its bounds and default)', () => {
    const schema = z.strictObject({
      limit: integerParamWithDefault(1, 100, 25).describe('Items per page.'),
      revision: integerParam(0, 10).describe('A revision.'),
    });
    expect((jsonSchemaOf(schema, 'input') as JsonSchema).properties).toEqual({
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'Items per page.' },
      revision: { type: 'integer', minimum: 0, maximum: 10, description: 'A revision.' },
    });
    // Validation is unchanged: digits in a query string, the default when absent.
    expect(schema.parse({ revision: '3' })).toEqual({ limit: 25, revision: 3 });
    expect(schema.safeParse({ limit: '101', revision: '3' }).success).toBe(false);
  });
});

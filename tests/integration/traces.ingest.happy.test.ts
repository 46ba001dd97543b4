import { describe, expect, it } from 'vitest';
import { batch, child, newIngestion, span, storedSpan, storedSpans } from '../helpers/ingestion';

describe('trace ingestion: accepted batches', () => {
  it('stores a root span and answers { accepted: n }', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const result = await send(batch(root));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({ accepted: 1 });
    const rows = await storedSpans(organizationId);
    expect(rows).toHaveLength(1);
  });
});

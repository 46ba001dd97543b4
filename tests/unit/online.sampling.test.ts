import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSampled, samplePoint } from '@/server/online/sampling';

// Sampling by span id (API.md "Online evaluation"): a stable point in [0, 1) per span id.
describe('online evaluation sampling', () => {
  it('gives each span id one point in [0, 1), the same every time', () => {
    const ids = Array.from({ length: 2000 }, () => randomBytes(8).toString('hex'));
    for (const id of ids) {
      const point = samplePoint(id);
      expect(point).toBeGreaterThanOrEqual(0);
      expect(point).toBeLessThan(1);
      expect(samplePoint(id)).toBe(point);
    }
    // A known value: the first 52 bits of SHA-256("0123456789abcdef") over 2^52.
    expect(samplePoint('0123456789abcdef')).toBe(0x9f9f5111f7b27 / 2 ** 52);
  });

  it('samples about the rate, none at 0 and all at 1, and a lower rate’s sample is inside a higher one’s', () => {
    const ids = Array.from({ length: 4000 }, () => randomBytes(8).toString('hex'));
    const at = (rate: number) => ids.filter((id) => isSampled(id, rate));
    expect(at(0)).toHaveLength(0);
    expect(at(1)).toHaveLength(ids.length);
    const half = at(0.5);
    expect(half.length).toBeGreaterThan(1800);
    expect(half.length).toBeLessThan(2200);
    const tenth = at(0.1);
    expect(tenth.length).toBeGreaterThan(300);
    expect(tenth.length).toBeLessThan(500);
    expect(tenth.every((id) => half.includes(id))).toBe(true);
  });
});

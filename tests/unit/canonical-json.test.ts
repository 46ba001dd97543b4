import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@/server/canonical-json';
import { requestDigest } from '@/server/api/idempotency';
import { digestOf } from '@/server/evals/freeze';

// Idempotency request digests and evaluation snapshot digests are stored; merging the two former
// canonical() functions into one must not change them. The digests below were computed by the code
// before the merge (idempotency.ts and evals/freeze.ts each with its own canonical()).
const body = { z: 1, a: { y: [3, { b: null, a: 'é\u2028' }], x: undefined }, m: [undefined, 1.5, -0, 1e21], s: 'x"y' };

describe('canonical JSON', () => {
  it('sorts keys recursively and leaves out undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined } })).toBe('{"a":{"d":[{"x":2,"y":1}]},"b":1}');
  });

  it('keeps idempotency request digests unchanged', () => {
    expect(requestDigest('POST', '/api/v1/organizations/o1/prompts', new URLSearchParams('b=2&a=1&a=0'), body)).toBe(
      '4f7ee5a49887769472af00d15c41019750ae0bd476becddc9aa9bbd58da87e04',
    );
    expect(requestDigest('DELETE', '/p', new URLSearchParams(''), undefined)).toBe(
      'd2a181a2b02bbaf6b083555b1d5365bb7c8e6406194e9f6602e75c5fe379c4ea',
    );
  });

  it('keeps evaluation snapshot digests unchanged', () => {
    expect(digestOf(body)).toBe('9b8c126aa1b11bafb59b5d6d84f2b2c8afffc8bdf847b6acf5809a0914dde323');
    expect(
      digestOf([
        { id: 'c1', position: 1, input: 'hi', expectedOutput: null, inputFormat: 'text', referenceFormat: 'text' },
      ]),
    ).toBe('3c7e32181830ff7b6afe78f0aa83eca170dea2c21d7a04c30761acc97938fa10');
    expect(
      digestOf({
        content: { messages: [{ role: 'system', text: 'a' }], model: 'm', params: { temperature: 0.2 } },
        when: new Date(0),
      }),
    ).toBe('7977a49353d953e7fce30f56e25db0a1aacba189da15d13f46463725d7010586');
  });
});

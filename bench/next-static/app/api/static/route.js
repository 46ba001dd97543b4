// Baseline (a) of `npm run bench -- retrieval`: a bare Next route handler that returns a constant
// JSON body shaped and sized like a retrieved prompt. Built only by the bench, never part of the product.
const body = JSON.stringify({
  promptId: 'prm_0000000000000000000000000',
  name: 'Support answers',
  versionId: 'ver_0000000000000000000000000',
  version: 1,
  label: 'production',
  content: {
    messages: [
      { role: 'system', content: 'You answer support questions for Acme. '.repeat(12) },
      { role: 'user', content: 'Question: {{question}}' },
    ],
    inputType: 'variables',
    modelId: 'gpt-4o-mini',
    temperature: 0.2,
  },
  createdAt: '2026-01-01T00:00:00.000Z',
});

export const dynamic = 'force-dynamic';

export function GET() {
  return new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } });
}

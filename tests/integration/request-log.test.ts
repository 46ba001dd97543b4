import { describe, expect, it } from 'vitest';
import { startRetrievalEntry } from '../helpers/retrieval-entry';

// deploy.md: one JSON line per request with its requestId, the id every API answer carries in
// X-Request-Id. The hot paths answer with writeHead(status, headers); their lines carry it too.
describe.skipIf(!process.env.DATABASE_URL)('the request log of the hot paths', () => {
  it.each([
    ['retrieval', 'GET', '/api/v1/prompts/prm_nothing', undefined],
    ['ingest', 'POST', '/api/v1/traces', '{}'],
  ])(
    '--role=%s: the line of a request names the X-Request-Id it answered with',
    async (role, method, path, body) => {
      let output = '';
      const entry = await startRetrievalEntry({ LOG_LEVEL: 'info' }, role, (text) => (output += text));
      try {
        const response = await fetch(`${entry.url}${path}`, {
          method,
          headers: { authorization: 'Bearer plr_not-a-key', 'content-type': 'application/json' },
          body,
        });
        expect(response.status).toBe(401);
        const requestId = response.headers.get('x-request-id');
        expect(requestId).toMatch(/^req_/);
        for (let i = 0; i < 50 && !output.includes(requestId!); i++) await new Promise((r) => setTimeout(r, 100));
        const line = output.split('\n').find((text) => text.includes(requestId!));
        expect(line, output.slice(-2000)).toBeDefined();
        expect(JSON.parse(line!)).toMatchObject({ requestId, method, route: path, status: 401, msg: 'request' });
      } finally {
        await entry.stop();
      }
    },
    120_000,
  );
});

import { Writable } from 'node:stream';
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { redactSecrets, requestLine } from '@/server/log';

// The request line is built by a template on the hot paths (server/log.ts); it must be the line pino
// writes for the same fields with the same options, byte for byte, whatever the route holds.
function pinoLine(fields: Record<string, unknown>, time: string): string {
  let written = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  });
  const logger = pino({ base: undefined, timestamp: () => time }, sink);
  logger.info(fields, 'request');
  logger.flush();
  return written;
}

describe('the request line', () => {
  it('is what pino writes for the same fields (routes with any characters, ids and methods present or not)', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ unit: 'binary' }), { nil: undefined }),
        fc.option(fc.constantFrom('GET', 'POST', 'M"E\\T'), { nil: undefined }),
        fc.string({ unit: 'binary' }),
        fc.integer({ min: 100, max: 599 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }).map((ms) => Math.round(ms * 10) / 10),
        (requestId, method, route, status, ms) => {
          const time = ',"time":"2026-11-27T08:00:00.000Z"';
          const line = requestLine(time, requestId, method, route, status, ms);
          expect(line).toBe(pinoLine({ requestId, method, route, status, ms }, time));
          expect(JSON.parse(line)).toMatchObject({ level: 30, route, status, ms, msg: 'request' });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('redactSecrets', () => {
  it('keeps only the prefix of a secret pasted into a path, and leaves ids and other routes as they are', () => {
    const secret = 'plr_qUDsyqTm7sIlPxai74n84q25mpo2BtdZW689iy6OMSP';
    expect(redactSecrets(`/api/v1/prompts/${secret}`)).toBe('/api/v1/prompts/plr_…');
    for (const prefix of ['plt_', 'pls_', 'plrt_', 'plc_', 'whsec_'])
      expect(redactSecrets(`/x/${prefix}AbCdEfGhIjKlMnOpQrStUv/y`)).toBe(`/x/${prefix}…/y`);
    for (const route of [
      '/api/v1/prompts/prm_01m8m0ek37abcdefghijklmn',
      '/api/v1/organizations/org_01m8m0ek37abcdefghijkl/prompts',
      '/api/v1/prompts/plr_short',
      '/api/v1/traces',
    ])
      expect(redactSecrets(route)).toBe(route);
  });
});

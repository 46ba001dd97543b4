import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fuzzManagementApi,
  formatFailures,
  seedFuzzTarget,
  type FuzzTarget,
  type SeedCall,
} from '../../bench/openapi-fuzz';
import { newOrganization, newUser } from '../helpers/api';
import { startEntry } from '../helpers/entry';

// The OpenAPI-driven fuzzer (bench/openapi-fuzz.ts) against the entry's web path over real HTTP:
// a bounded run here (FUZZ_CASES, default 400; a new seed each run, FUZZ_SEED repeats one), the
// long run is `npm run bench -- fuzz` against the production build.
const cases = Number(process.env.FUZZ_CASES ?? 400);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

let entry: Awaited<ReturnType<typeof startEntry>>;
let target: FuzzTarget;

beforeAll(async () => {
  process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '0'; // this file's process only
  entry = await startEntry();
  const user = await newUser();
  const member = await newUser();
  const organizationId = (await newOrganization(user)).id;
  const call: SeedCall = async (method, route, body) => {
    const reply = await user.call(method, route, { body });
    if (reply.status >= 300)
      throw new Error(`seeding ${method} ${route}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  target = await seedFuzzTarget(call, { baseUrl: entry.url, token: user.token, organizationId, member });
});
afterAll(() => entry.close());

describe('OpenAPI-driven fuzzing of the management API', () => {
  it(`${cases} generated requests: never a 5xx, every error in the envelope, every status documented, no valid request refused`, async () => {
    const report = await fuzzManagementApi(target, { runs: cases, seed });
    expect(report.cases).toBe(cases);
    expect(report.failures, formatFailures(report)).toEqual([]);
  }, 240_000);
});

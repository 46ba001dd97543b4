import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzManagementApi, formatFailures, type FuzzTarget } from '../../bench/openapi-fuzz';
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
  const orgId = (await newOrganization(user)).id;
  await user.call('POST', `/organizations/${orgId}/members`, { body: { email: member.email, role: 'viewer' } });
  const prompt = (await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Fuzz target' } })).body.id;
  const victim = (await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Fuzz victim' } })).body.id;
  const caseId = (await user.call('POST', `/organizations/${orgId}/prompts/${prompt}/dataset/cases`, { body: { revision: 0, row: { input: 'hello', expectedOutput: 'world' } } }))
    .body.id;
  const keyId = (await user.call('POST', `/organizations/${orgId}/prompts/${prompt}/keys`, { body: { name: 'Fuzz' } })).body.key.id;
  target = {
    baseUrl: entry.url,
    token: user.token,
    ids: {
      organizationId: orgId,
      promptId: prompt,
      caseId,
      keyId,
      userId: member.id,
      number: '1',
      label: 'production',
      evaluationId: 'eval_none',
      traceId: '0'.repeat(32),
      warningId: 'warn_none',
    },
    // Destructive operations work on their own prompt, never on the one the others read.
    idsFor: { archive_prompt: { promptId: victim } },
  };
});
afterAll(() => entry.close());

describe('OpenAPI-driven fuzzing of the management API', () => {
  it(`${cases} generated requests: never a 5xx, every error in the envelope, every status documented, no valid request refused`, async () => {
    const report = await fuzzManagementApi(target, { runs: cases, seed });
    expect(report.cases).toBe(cases);
    expect(report.failures, formatFailures(report)).toEqual([]);
  }, 240_000);
});

import { call, newOrganization, newUser, type ApiResult } from './api';
import { promptWithVersions } from './prompts';

// An active prompt with `versions` versions (production and staging on version 1) and one retrieval key.
export async function retrievalSetup(versions = 1) {
  const owner = await newUser();
  const org = await newOrganization(owner);
  const prompt = await promptWithVersions(owner, org.id, versions);
  const key = await newRetrievalKey(owner.call, prompt.base);
  return { owner, org, ...prompt, promptId: prompt.prompt.id, ...key };
}

export async function newRetrievalKey(
  ownerCall: (method: string, path: string, options?: any) => Promise<ApiResult>,
  base: string,
  name = 'app',
) {
  const created = await ownerCall('POST', `${base}/keys`, { body: { name } });
  if (created.status !== 201) throw new Error(`create key failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { keyId: created.body.key.id as string, secret: created.body.secret as string };
}

// GET /api/v1/prompts/{id} through the in-process router, as Next's catch-all serves it.
export function retrieve(
  promptId: string,
  secret: string | null,
  options: { query?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult> {
  return call('GET', `/prompts/${promptId}`, { token: secret, query: options.query, headers: options.headers });
}

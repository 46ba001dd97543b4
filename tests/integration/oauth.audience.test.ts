import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { authenticateManagement } from '@/server/auth/oauth';
import { AppError } from '@/server/errors';
import { call } from '../helpers/api';
import { signToken } from '../helpers/issuer';

// A token names one protected resource in `aud`: /api/v1 or /mcp, and the other refuses it.
const apiAudience = 'http://localhost:3999/api/v1';
const mcpAudience = 'http://localhost:3999/mcp';

async function asMcp(token: string) {
  const request = new Request(mcpAudience, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  return authenticateManagement(await getDb(), request, 'mcp').then(
    (actor) => ({ actor, error: null }),
    (error: unknown) => ({ actor: null, error: error as AppError }),
  );
}

async function asApi(token: string) {
  const request = new Request(`${apiAudience}/me`, { headers: { authorization: `Bearer ${token}` } });
  return authenticateManagement(await getDb(), request, 'api');
}

describe('audience separation', () => {
  it('on /api/v1 only the CLI client acts for a person (human); any other client is an agent', async () => {
    await call('GET', '/me', { token: await signToken({ sub: 'aud-api-person' }) });
    const cli = await asApi(await signToken({ sub: 'aud-api-person' }));
    expect(cli).toMatchObject({ clientId: 'promptloop-cli', human: true });
    for (const clientId of ['client_registered-agent', 'another-issuers-app']) {
      const agent = await asApi(await signToken({ sub: 'aud-api-person', clientId }));
      expect(agent).toMatchObject({ clientId, human: false });
    }
  });

  it('/api/v1 refuses a token whose aud is /mcp', async () => {
    const token = await signToken({ sub: 'aud-mcp-only', audience: mcpAudience });
    const result = await call('GET', '/me', { token });
    expect(result.status).toBe(401);
    expect(result.body.error.code).toBe('unauthorized');
    expect(result.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(result.body.error.message).toContain(
      `issued for another resource; request a token with resource=${apiAudience}`,
    );
  });

  it('/mcp accepts an /mcp token and refuses an /api/v1 token, pointing at its own resource metadata', async () => {
    const good = await asMcp(await signToken({ sub: 'aud-mcp-user', audience: mcpAudience }));
    expect(good.error).toBeNull();
    expect(good.actor).toMatchObject({ clientId: 'promptloop-cli', human: false });

    const wrong = await asMcp(await signToken({ sub: 'aud-api-user', audience: apiAudience }));
    expect(wrong.error).toBeInstanceOf(AppError);
    expect(wrong.error!.code).toBe('unauthorized');
    expect(wrong.error!.message).toContain(`request a token with resource=${mcpAudience}`);
    expect(wrong.error!.headers?.['www-authenticate']).toBe(
      'Bearer error="invalid_token", resource_metadata="http://localhost:3999/.well-known/oauth-protected-resource/mcp"',
    );

    const missing = await authenticateManagement(await getDb(), new Request(mcpAudience), 'mcp').catch(
      (e: AppError) => e,
    );
    expect((missing as AppError).headers?.['www-authenticate']).toBe(
      'Bearer resource_metadata="http://localhost:3999/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('/api/v1 still accepts an /api/v1 token', async () => {
    const token = await signToken({ sub: 'aud-api-ok', audience: apiAudience });
    expect((await call('GET', '/me', { token })).status).toBe(200);
  });
});

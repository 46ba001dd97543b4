import { describe, expect, it } from 'vitest';
import { metadataResponse, tokenRoute } from '@/server/oauth/endpoints';
import { newTeam } from '../helpers/api';
import { form } from '../helpers/oauth';

// With an external issuer (this suite's default: OAUTH_ISSUER is the test issuer) the app issues
// no tokens, so no service account can be created: 409 invalid_state. Listing still answers, so
// accounts made before a switch of issuer can be seen and revoked.

describe('service accounts with an external OAUTH_ISSUER', () => {
  it('create → 409 invalid_state (state external_issuer), nothing stored; list answers an empty page; non-admins still 403', async () => {
    const { org, admin, editor } = await newTeam();
    const created = await admin.call('POST', `/organizations/${org.id}/service-accounts`, {
      body: { name: 'CI', role: 'editor' },
    });
    expect(created.status).toBe(409);
    expect(created.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'external_issuer' } });
    expect(created.body.error.message).toContain('OAUTH_ISSUER');
    expect((await admin.call('GET', `/organizations/${org.id}/service-accounts`)).body).toEqual({
      items: [],
      nextCursor: null,
    });
    expect(
      (await editor.call('POST', `/organizations/${org.id}/service-accounts`, { body: { name: 'CI', role: 'editor' } }))
        .body.error.code,
    ).toBe('admin_required');
    expect((await admin.call('GET', '/me')).body.kind).toBe('user');
  });

  it('the built-in token endpoint and metadata are not served (404)', async () => {
    const reply = await form(tokenRoute, {
      grant_type: 'client_credentials',
      client_id: 'sa_00000000000000000000000000',
      client_secret: 'x',
    });
    expect(reply.status).toBe(404);
    expect(metadataResponse().status).toBe(404);
  });
});

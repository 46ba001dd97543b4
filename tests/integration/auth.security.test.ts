import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { call, newOrganization, newTeam, newUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';

const metadata = 'resource_metadata="http://localhost:3999/.well-known/oauth-protected-resource"';

async function expectInvalidToken(token: string) {
  const result = await call('GET', '/me', { token });
  expect(result.status, JSON.stringify(result.body)).toBe(401);
  expect(result.body.error.code).toBe('unauthorized');
  const header = result.headers.get('www-authenticate')!;
  expect(header).toMatch(/^Bearer /);
  expect(header).toContain('error="invalid_token"');
  expect(header).toContain(metadata);
}

describe('management token rules', () => {
  it('no token → 401 with the resource metadata challenge and no error attribute', async () => {
    const result = await call('GET', '/me');
    expect(result.status).toBe(401);
    expect(result.body.error.code).toBe('unauthorized');
    expect(result.headers.get('www-authenticate')).toBe(`Bearer ${metadata}`);
  });

  it('a non-Bearer scheme counts as no token', async () => {
    const result = await call('GET', '/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(result.status).toBe(401);
    expect(result.headers.get('www-authenticate')).toBe(`Bearer ${metadata}`);
  });

  it('a valid token is accepted', async () => {
    const token = await signToken({ sub: 'valid-subject' });
    expect((await call('GET', '/me', { token })).status).toBe(200);
  });

  it('empty and garbage tokens', async () => {
    await expectInvalidToken('not-a-jwt');
    await expectInvalidToken('a.b.c');
    const empty = await call('GET', '/me', { headers: { authorization: 'Bearer ' } });
    expect(empty.status).toBe(401);
  });

  it('wrong issuer', async () => expectInvalidToken(await signToken({ sub: 's1', issuer: 'https://evil.example' })));
  it('wrong audience', async () =>
    expectInvalidToken(await signToken({ sub: 's1', audience: 'http://localhost:3999/mcp' })));
  it('typ other than at+jwt', async () => expectInvalidToken(await signToken({ sub: 's1', typ: 'JWT' })));
  it('typ application/at+jwt is the same media type (RFC 9068)', async () => {
    expect(
      (await call('GET', '/me', { token: await signToken({ sub: 's-media-type', typ: 'application/at+jwt' }) })).status,
    ).toBe(200);
  });
  it('not yet valid (nbf in the future)', async () =>
    expectInvalidToken(await signToken({ sub: 's1', extra: { nbf: Math.floor(Date.now() / 1000) + 3600 } })));
  it('an audience list that includes ours is accepted', async () => {
    const token = await signToken({
      sub: 's-aud-list',
      audience: ['https://other.example', 'http://localhost:3999/api/v1'],
    });
    expect((await call('GET', '/me', { token })).status).toBe(200);
  });
  it('expired', async () =>
    expectInvalidToken(await signToken({ sub: 's1', expiresIn: Math.floor(Date.now() / 1000) - 120 })));
  it('issued in the future (iat a day ahead; two minutes of skew still pass)', async () => {
    const at = (seconds: number) =>
      signToken({ sub: 's1', omit: ['iat'], extra: { iat: Math.floor(Date.now() / 1000) + seconds }, expiresIn: '2d' });
    await expectInvalidToken(await at(86_400));
    expect((await call('GET', '/me', { token: await at(120) })).status).toBe(200);
  });
  it.each(['sub', 'exp', 'iat', 'client_id'] as const)('missing %s', async (claim) =>
    expectInvalidToken(await signToken({ sub: 's1', omit: [claim] })),
  );

  it('a signature by an unknown key', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({ scope: 'management', client_id: 'cli' })
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key', typ: 'at+jwt' })
      .setIssuer(process.env.OAUTH_ISSUER!)
      .setAudience(process.env.OAUTH_AUDIENCE!)
      .setSubject('s1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    await expectInvalidToken(token);
  });

  it('an algorithm outside the allowlist (HS256 and none)', async () => {
    const secret = new TextEncoder().encode('x'.repeat(32));
    const hs = await new SignJWT({ scope: 'management', client_id: 'cli' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(process.env.OAUTH_ISSUER!)
      .setAudience(process.env.OAUTH_AUDIENCE!)
      .setSubject('s1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(secret);
    await expectInvalidToken(hs);
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        iss: process.env.OAUTH_ISSUER,
        aud: process.env.OAUTH_AUDIENCE,
        sub: 's1',
        client_id: 'c',
        scope: 'management',
        iat: 1,
        exp: 9999999999,
      }),
    ).toString('base64url');
    await expectInvalidToken(`${header}.${payload}.`);
  });

  it('claims that cannot be stored (U+0000, a lone surrogate) are a bad credential, not a bad request', async () => {
    for (const claims of [{ sub: 'a\u0000b' }, { sub: 'a\ud800b' }, { sub: 'ok-sub', extra: { name: 'x\u0000' } }])
      await expectInvalidToken(await signToken(claims));
  });
  it('a tampered payload', async () => {
    const token = await signToken({ sub: 's1' });
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'someone-else', scope: 'management', client_id: 'x' })).toString(
      'base64url',
    );
    await expectInvalidToken(`${h}.${forged}.${s}`);
  });

  it('retrieval and ingestion keys are not management tokens', async () => {
    await expectInvalidToken('plr_0123456789abcdefghijABCDEFGHIJ0123456789abc');
    await expectInvalidToken('plt_0123456789abcdefghijABCDEFGHIJ0123456789abc');
  });

  it('a token without the management scope → 403 insufficient_scope', async () => {
    for (const scope of ['', 'profile', 'managements read']) {
      const result = await call('GET', '/me', { token: await signToken({ sub: 's2', scope }) });
      expect(result.status).toBe(403);
      expect(result.body.error.code).toBe('insufficient_scope');
      const header = result.headers.get('www-authenticate')!;
      expect(header).toContain('error="insufficient_scope"');
      expect(header).toContain('scope="management"');
    }
  });

  it('users are keyed by (issuer, sub): the same sub maps to the same user, another sub to another', async () => {
    const a1 = await call('GET', '/me', {
      token: await signToken({ sub: 'stable-sub', email: 'stable@example.test', extra: { email_verified: true } }),
    });
    const a2 = await call('GET', '/me', { token: await signToken({ sub: 'stable-sub', clientId: 'other-client' }) });
    const b = await call('GET', '/me', { token: await signToken({ sub: 'other-sub' }) });
    expect(a1.body.id).toBe(a2.body.id);
    expect(a1.body.email).toBe('stable@example.test');
    expect(b.body.id).not.toBe(a1.body.id);
  });

  it('an address the issuer verifies only on a later token is kept then, if still free', async () => {
    const sub = `later-${Date.now()}`;
    const email = `${sub}@example.test`;
    const unverified = await call('GET', '/me', { token: await signToken({ sub, email }) });
    expect(unverified.body.email).toBeNull();
    const verified = await call('GET', '/me', {
      token: await signToken({ sub, email, extra: { email_verified: true } }),
    });
    expect(verified.body).toMatchObject({ id: unverified.body.id, email });
    // An address another account holds is still never linked.
    const taken = await newUser({ email: `${sub}-taken@example.test` });
    const other = await call('GET', '/me', { token: await signToken({ sub: `${sub}-2` }) });
    const claimed = await call('GET', '/me', {
      token: await signToken({ sub: `${sub}-2`, email: taken.email, extra: { email_verified: true } }),
    });
    expect(claimed.body).toMatchObject({ id: other.body.id, email: null });
  });

  it('an email already used by another account is not linked to a new subject', async () => {
    const first = await newUser({ email: 'taken-email@example.test' });
    const second = await call('GET', '/me', {
      token: await signToken({ sub: 'intruder', email: 'taken-email@example.test', extra: { email_verified: true } }),
    });
    expect(second.status).toBe(200);
    expect(second.body.id).not.toBe(first.id);
    expect(second.body.email).toBeNull();
  });
});

describe('live membership and cross-organization access', () => {
  it("another organization's id → 404, for reads and writes alike", async () => {
    const { org } = await newTeam();
    const stranger = await newUser();
    await newOrganization(stranger);
    for (const [method, path, body] of [
      ['GET', `/organizations/${org.id}`, undefined],
      ['PATCH', `/organizations/${org.id}`, { name: 'x' }],
      ['GET', `/organizations/${org.id}/members`, undefined],
      ['POST', `/organizations/${org.id}/members`, { email: stranger.email, role: 'admin' }],
      ['POST', `/organizations/${org.id}/deletion-link`, undefined],
    ] as const) {
      const result = await stranger.call(method, path, { body });
      expect(result.status, `${method} ${path}`).toBe(404);
      expect(result.body.error.code).toBe('not_found');
    }
  });

  it('a missing organization looks the same as a foreign one', async () => {
    const user = await newUser();
    expect((await user.call('GET', '/organizations/org_00000000000000000000000000')).body.error.code).toBe('not_found');
    expect((await user.call('GET', '/organizations/not-an-id')).status).toBe(404);
  });

  it('a viewer writing → 403 forbidden-class error and nothing changes', async () => {
    const { org, viewer, admin } = await newTeam();
    const result = await viewer.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Viewer was here' } });
    expect(result.status).toBe(403);
    expect((await admin.call('GET', `/organizations/${org.id}`)).body.name).toBe(org.name);
  });

  it('a removed member is refused on the very next call, with the same token', async () => {
    const { org, admin, editor } = await newTeam();
    expect((await editor.call('GET', `/organizations/${org.id}`)).status).toBe(200);
    await admin.call('DELETE', `/organizations/${org.id}/members/${editor.id}`);
    expect((await editor.call('GET', `/organizations/${org.id}`)).status).toBe(404);
  });

  it('a demoted admin loses admin rights on the next call', async () => {
    const { org, admin, editor } = await newTeam();
    await admin.call('PATCH', `/organizations/${org.id}/members/${editor.id}`, { body: { role: 'admin' } });
    expect((await editor.call('PATCH', `/organizations/${org.id}`, { body: { name: 'By editor-admin' } })).status).toBe(
      200,
    );
    await admin.call('PATCH', `/organizations/${org.id}/members/${editor.id}`, { body: { role: 'viewer' } });
    const result = await editor.call('PATCH', `/organizations/${org.id}`, { body: { name: 'Again' } });
    expect(result.status).toBe(403);
    expect(result.body.error.code).toBe('admin_required');
  });

  it('the organization comes from the path, never from the body', async () => {
    const { org, admin } = await newTeam();
    const other = await newOrganization(admin, 'Other');
    const result = await admin.call('PATCH', `/organizations/${org.id}`, {
      body: { name: 'x', organizationId: other.id },
    });
    expect(result.status).toBe(400);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

// Shared by the benchmarks that call the management API of a started server (bench/fuzz.ts,
// bench/imports.ts): point OAUTH_ISSUER and OAUTH_JWKS_URL at it.

// An OAuth issuer of our own: its JWKS over HTTP, tokens signed here.
export async function startIssuer(): Promise<{
  url: string;
  server: Server;
  sign: (sub: string, audience: string) => Promise<string>;
}> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fuzz', alg: 'ES256', use: 'sig' };
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (sub: string, audience: string) =>
    new SignJWT({ scope: 'management', client_id: 'fuzz', email: `${sub}@example.com`, email_verified: true })
      .setProtectedHeader({ alg: 'ES256', kid: 'fuzz', typ: 'at+jwt' })
      .setIssuer(url)
      .setAudience(audience)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime('2h')
      .sign(privateKey);
  return { url, server, sign };
}

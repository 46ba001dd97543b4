import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWTPayload } from 'jose';
import { inject } from 'vitest';

let key: CryptoKey | Uint8Array | undefined;

export type TokenOptions = {
  sub: string;
  clientId?: string;
  scope?: string;
  email?: string;
  name?: string;
  issuer?: string;
  audience?: string | string[];
  typ?: string;
  expiresIn?: string | number;
  omit?: ('sub' | 'exp' | 'iat' | 'client_id')[];
  extra?: JWTPayload;
};

export async function signToken(options: TokenOptions): Promise<string> {
  key ??= await importJWK(JSON.parse(inject('issuerPrivateJwk')), 'ES256');
  const omit = new Set(options.omit ?? []);
  const claims: JWTPayload = { scope: options.scope ?? 'management', ...options.extra };
  if (!omit.has('client_id')) claims.client_id = options.clientId ?? 'promptloop-cli';
  if (options.email) claims.email = options.email;
  if (options.name) claims.name = options.name;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'test-key', typ: options.typ ?? 'at+jwt' })
    .setIssuer(options.issuer ?? process.env.OAUTH_ISSUER!)
    .setAudience(options.audience ?? process.env.OAUTH_AUDIENCE!)
    .setJti(randomUUID());
  if (!omit.has('sub')) jwt.setSubject(options.sub);
  if (!omit.has('iat')) jwt.setIssuedAt();
  if (!omit.has('exp')) jwt.setExpirationTime(options.expiresIn ?? '10m');
  return jwt.sign(key);
}

// An identity provider the test controls: RFC 8414 metadata and a JWKS over real HTTP, signing
// keys it can rotate, and the ways a provider fails. `requests` lists every path asked for.
export type ProviderMode = 'ok' | 'error' | 'not-json' | 'no-keys' | 'hang' | 'metadata-error';

export type TestProvider = {
  issuer: string;
  requests: string[];
  mode: ProviderMode;
  sign: (options: TokenOptions & { kid?: string }) => Promise<string>;
  rotate: (kid: string) => Promise<void>;
  stop: () => Promise<void>;
  start: () => Promise<void>;
};

export async function startProvider(options: { path?: string } = {}): Promise<TestProvider> {
  const path = options.path ?? '/';
  const pathNoSlash = path.replace(/\/+$/, '');
  const published: Record<string, unknown>[] = [];
  const signing = new Map<string, CryptoKey>();
  const addKey = async (kid: string) => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    published.push({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' });
    signing.set(kid, privateKey);
  };
  await addKey('k1');
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    provider.requests.push(req.url ?? '');
    const mode = provider.mode;
    if (mode === 'hang') return; // never answers; closed by stop()
    const isMetadata = req.url === `/.well-known/oauth-authorization-server${pathNoSlash}`;
    const isJwks = req.url === `${pathNoSlash}/jwks`;
    if (!isMetadata && !isJwks) return void res.writeHead(404).end();
    if (mode === 'error' || (mode === 'metadata-error' && isMetadata))
      return void res.writeHead(500).end('upstream trouble');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (mode === 'not-json') return void res.end('<html>maintenance</html>');
    if (isMetadata)
      return void res.end(JSON.stringify({ issuer: provider.issuer, jwks_uri: `${origin}${pathNoSlash}/jwks` }));
    res.end(JSON.stringify({ keys: mode === 'no-keys' ? [] : published }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const provider: TestProvider = {
    issuer: `${origin}${path}`,
    requests: [],
    mode: 'ok',
    async sign(token) {
      const kid = token.kid ?? 'k1';
      const key = signing.get(kid) ?? (await generateKeyPair('ES256')).privateKey; // unknown kid: a key nobody publishes
      const jwt = new SignJWT({
        scope: token.scope ?? 'management',
        client_id: token.clientId ?? 'promptloop-cli',
        ...token.extra,
      })
        .setProtectedHeader({ alg: 'ES256', kid, typ: token.typ ?? 'at+jwt' })
        .setIssuer(token.issuer ?? provider.issuer)
        .setAudience(token.audience ?? process.env.OAUTH_AUDIENCE!)
        .setSubject(token.sub)
        .setIssuedAt()
        .setExpirationTime(token.expiresIn ?? '10m');
      return jwt.sign(key);
    },
    rotate: addKey,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    start: () => listen(port),
  };
  return provider;
}

import { randomUUID } from 'node:crypto';
import { dispatch } from '@/server/api/router';
import { signToken, type TokenOptions } from './issuer';

export type ApiResult<T = any> = { status: number; headers: Headers; body: T };

export type CallOptions = {
  token?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  query?: string;
};

// A request to `${origin}/api/v1${path}` with the bearer token, a JSON body and extra headers.
export function apiRequest(origin: string, method: string, path: string, options: CallOptions = {}): Request {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return new Request(`${origin}/api/v1${path}${options.query ? `?${options.query}` : ''}`, { method, headers, body });
}

export async function apiResult<T = any>(response: Response): Promise<ApiResult<T>> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

// Calls the /api/v1 route handlers in-process with a real Request, exactly as Next does.
export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResult<T>> {
  return apiResult<T>(await dispatch(apiRequest('http://localhost:3999', method, path, options)));
}

export type TestUser = {
  sub: string;
  email: string;
  token: string;
  id: string;
  call: <T = any>(method: string, path: string, options?: Omit<CallOptions, 'token'>) => Promise<ApiResult<T>>;
};

// A user known to the external test issuer, provisioned by their first API call. The issuer
// vouches for the address (`email_verified: true`) unless `extra` says otherwise.
export async function newUser(options: Partial<TokenOptions> = {}): Promise<TestUser> {
  const sub = options.sub ?? `sub-${randomUUID()}`;
  const email = options.email ?? `${sub}@example.test`;
  const token = await signToken({ ...options, sub, email, extra: { email_verified: true, ...options.extra } });
  const me = await call('GET', '/me', { token });
  if (me.status !== 200) throw new Error(`provisioning failed: ${me.status} ${JSON.stringify(me.body)}`);
  return {
    sub,
    email,
    token,
    id: me.body.id,
    call: (method, path, rest = {}) => call(method, path, { ...rest, token }),
  };
}

// Organizations created by this test file (its process): evaluation drains stay within them, so
// files sharing one database never execute each other's runs.
export const createdOrganizations = new Set<string>();

export async function newOrganization(
  owner: TestUser,
  name = `Org ${randomUUID().slice(0, 8)}`,
): Promise<{ id: string; name: string }> {
  const created = await owner.call('POST', '/organizations', { body: { name } });
  if (created.status !== 201) throw new Error(`create org failed: ${created.status} ${JSON.stringify(created.body)}`);
  createdOrganizations.add(created.body.id);
  return created.body;
}

// An organization with an admin, an editor and a viewer.
export async function newTeam() {
  const admin = await newUser();
  const editor = await newUser();
  const viewer = await newUser();
  const org = await newOrganization(admin);
  for (const [user, role] of [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ] as const) {
    const added = await admin.call('POST', `/organizations/${org.id}/members`, { body: { email: user.email, role } });
    if (added.status !== 201) throw new Error(`add member failed: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return { org, admin, editor, viewer };
}

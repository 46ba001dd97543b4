import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { ConsentCard } from '@/components/oauth/ConsentCard';
import { ContinueTo } from '@/components/oauth/ContinueTo';
import { AuthShell } from '@/components/auth/AuthShell';
import { Card } from '@/components/ui/Card';
import { getDb } from '@/db/client';
import { getSessionActor, getSessionUser } from '@/server/auth/nextauth';
import { authorizeParams, checkAuthorizeRequest, consentToken, hasConsent } from '@/server/oauth/authorize';
import { consentPath } from '@/server/oauth/endpoints';
import { isBuiltInIssuer, resources } from '@/server/oauth/issuer';

export const metadata: Metadata = { title: 'Authorize application' };
export const dynamic = 'force-dynamic';

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

function toParams(raw: Record<string, string | string[] | undefined>): URLSearchParams {
  const all = new URLSearchParams();
  for (const [name, value] of Object.entries(raw))
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) all.append(name, v);
  return all;
}

// Reached from /oauth/authorize (signed in, no remembered consent) or after signing in. Anything
// other than "ask the person" goes back to /oauth/authorize, which answers with the right redirect.
export default async function ConsentPage({ searchParams }: { searchParams: SearchParams }) {
  const all = toParams(await searchParams);
  const again = `/oauth/authorize?${all.toString()}`;
  const db = await getDb();
  const check = isBuiltInIssuer()
    ? await checkAuthorizeRequest(db, all)
    : ({
        kind: 'error_page',
        title: 'Not available',
        message: 'This deployment uses an external authorization server.',
      } as const);
  if (check.kind === 'error_page') {
    return (
      <AuthShell>
        <Card className="auth-card">
          <div className="auth-heading">
            <h1>{check.title}</h1>
            <p className="muted">{check.message}</p>
          </div>
          <p className="muted">
            Nothing was shared with the application. Start the sign-in again from the application.
          </p>
        </Card>
      </AuthShell>
    );
  }
  if (check.kind === 'error_redirect') return <AuthShell>{<ContinueTo href={again} />}</AuthShell>;
  const actor = await getSessionActor();
  if (!actor) redirect(`/sign-in?callbackUrl=${encodeURIComponent(consentPath(all))}`);
  if (await hasConsent(db, actor.userId, check.request)) return <AuthShell>{<ContinueTo href={again} />}</AuthShell>;
  const user = await getSessionUser();
  const fields: [string, string][] = authorizeParams.flatMap((name) =>
    all.has(name) ? [[name, all.get(name)!] as [string, string]] : [],
  );
  fields.push(['consent_token', consentToken(actor.userId, all)]);
  const { request } = check;
  const resource = request.resource ?? resources().api;
  return (
    <AuthShell>
      <ConsentCard
        clientName={request.client.name}
        clientId={request.client.id}
        builtIn={request.client.builtIn}
        redirectHost={new URL(request.redirectUri).host}
        resourceLabel={resource === resources().mcp ? 'the MCP server' : 'the management API'}
        signedInAs={user?.email ?? ''}
        fields={fields}
      />
    </AuthShell>
  );
}

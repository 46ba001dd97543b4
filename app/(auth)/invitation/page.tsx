import type { Metadata } from 'next';
import { AuthResult } from '@/components/auth/AuthResult';
import { AcceptInvitation } from '@/components/members/AcceptInvitation';
import { ButtonLink } from '@/components/ui/Button';
import { getDb } from '@/db/client';
import { getSessionActor } from '@/server/auth/nextauth';
import { isAppError } from '@/server/errors';
import { checkInvitation } from '@/server/orgs/invitations';
import { getAccountSettings } from '@/server/account/settings';

export const metadata: Metadata = { title: 'Join an organization' };
export const dynamic = 'force-dynamic';

// The emailed invitation: checked first (an expired or revoked one says so), then accepted by the
// signed-in person whose account uses the invited address; others are sent to sign in or sign up.
export default async function InvitationPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const token = typeof params.token === 'string' ? params.token : '';
  const db = await getDb();
  let invitation: Awaited<ReturnType<typeof checkInvitation>>;
  try {
    invitation = await checkInvitation({ db }, token);
  } catch (error) {
    if (!isAppError(error)) throw error;
    return (
      <AuthResult
        tone="warning"
        title="This invitation can no longer be used"
        actions={
          <ButtonLink href="/organizations" variant="primary" block>
            Go to Promptloop
          </ButtonLink>
        }
      >
        It expired, was revoked or was already used. Ask an admin of the organization to invite you again.
      </AuthResult>
    );
  }
  const here = `/invitation?token=${encodeURIComponent(token)}`;
  const actor = await getSessionActor();
  const signedIn = actor ? await getAccountSettings({ db, actor }) : null;
  return (
    <AcceptInvitation
      token={token}
      organization={invitation.organization}
      email={invitation.email}
      role={invitation.role}
      signedInAs={signedIn ? (signedIn.email ?? '') : null}
      signUpHref={`/sign-up?${new URLSearchParams({ email: invitation.email, callbackUrl: here })}`}
      signInHref={`/sign-in?${new URLSearchParams({ email: invitation.email, callbackUrl: here })}`}
    />
  );
}

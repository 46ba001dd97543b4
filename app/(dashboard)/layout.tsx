import { Suspense, type ReactNode } from 'react';
import { VerifyEmailBanner } from '@/components/auth/VerifyEmailBanner';
import { Sidebar } from '@/components/shell/Sidebar';
import { FocusRescue } from '@/components/ui/focus-rescue';
import { SignInRedirect } from '@/components/shell/SignInRedirect';
import { getDb } from '@/db/client';
import { getEmailStatus } from '@/server/account/email-verification';
import { getSessionActor, getSessionUser } from '@/server/auth/nextauth';
import { CheckoutAvailability } from '@/components/billing/checkout-availability';
import { canSellPro } from '@/server/config';

// Every page in this group needs a session; nothing below renders without one. A session that a
// password reset ended counts as none.
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await getSessionUser();
  const actor = user ? await getSessionActor() : null;
  if (!user || !actor) {
    return (
      <Suspense>
        <SignInRedirect />
      </Suspense>
    );
  }
  const email = await getEmailStatus({ db: await getDb(), actor });
  return (
    <CheckoutAvailability available={canSellPro()}>
      <div className="shell">
        <FocusRescue />
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <Sidebar user={{ email: user.email, name: user.name }} />
        <main className="main" id="main" tabIndex={-1}>
          {email.verificationRequired && email.email && !email.verified ? (
            <VerifyEmailBanner email={email.email} />
          ) : null}
          {children}
        </main>
      </div>
    </CheckoutAvailability>
  );
}

import { Suspense, type ReactNode } from 'react';
import { Sidebar } from '@/components/shell/Sidebar';
import { SignInRedirect } from '@/components/shell/SignInRedirect';
import { getSessionUser } from '@/server/auth/nextauth';

// Every page in this group needs a session; nothing below renders without one.
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const user = await getSessionUser();
  if (!user) {
    return (
      <Suspense>
        <SignInRedirect />
      </Suspense>
    );
  }
  return (
    <div className="shell">
      <Sidebar user={{ email: user.email, name: user.name }} />
      <main className="main" id="main">
        {children}
      </main>
    </div>
  );
}

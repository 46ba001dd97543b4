import Link from 'next/link';
import type { ReactNode } from 'react';

// The centred card layout of the sign-in pages and the OAuth consent page.
export function AuthShell({ children }: { children: ReactNode }) {
  return (
    <main className="auth">
      <div className="auth-inner">
        <Link href="/" className="brand auth-brand">
          <span className="brand-mark" aria-hidden="true">
            P
          </span>
          Promptloop
        </Link>
        {children}
      </div>
    </main>
  );
}

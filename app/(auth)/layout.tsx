import Link from 'next/link';
import type { ReactNode } from 'react';

export default function AuthLayout({ children }: { children: ReactNode }) {
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

'use client';

import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useEffect } from 'react';
import { safeRedirectPath } from '@/lib/redirects';

// Layouts cannot see the requested URL, so the server renders this instead of the page when
// there is no session, and the browser goes to sign-in with the exact place to come back to.
export function SignInRedirect() {
  const router = useRouter();
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const query = searchParams.toString();
  const target = `/sign-in?callbackUrl=${encodeURIComponent(safeRedirectPath(pathname + (query ? `?${query}` : '')))}`;

  useEffect(() => {
    router.replace(target);
  }, [router, target]);

  return (
    <main className="center-page">
      <p className="muted">
        Your session has ended. <Link href={target}>Sign in to continue</Link>.
      </p>
    </main>
  );
}

'use client';

import { useEffect } from 'react';

// A full-page navigation (not the client router): the authorization endpoint answers with a 302
// to the application's redirect URI, which only a real navigation follows.
export function ContinueTo({ href }: { href: string }) {
  useEffect(() => {
    window.location.replace(href);
  }, [href]);
  return (
    <p className="muted" role="status">
      Returning to the application… <a href={href}>Continue</a>
    </p>
  );
}

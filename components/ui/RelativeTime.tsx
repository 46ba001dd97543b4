'use client';

import { useEffect, useState } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';

// "3 minutes ago" that keeps itself current while the page stays open (every 10 s under a minute
// old, then every 30 s), with the exact date and time on hover.
export function RelativeTime({ time }: { time: string | number }) {
  const [now, setNow] = useState(() => Date.now());
  const young = Math.abs(now - new Date(time).getTime()) < 60_000;
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), young ? 10_000 : 30_000);
    return () => clearInterval(timer);
  }, [young]);
  // A moment newer than the last tick (a save just now) is "now", not "in 12 seconds"; times truly
  // ahead (an expiry, a renewal) keep their "in …".
  const ahead = new Date(time).getTime() - now;
  return (
    <time dateTime={new Date(time).toISOString()} title={formatDateTime(new Date(time).toISOString())}>
      {formatRelative(time, ahead > 0 && ahead < 60_000 ? now + ahead : now)}
    </time>
  );
}

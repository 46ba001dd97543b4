'use client';

import { useCallback, useState } from 'react';

// Copies text to the clipboard and reports `copied` for a moment afterwards (1.5 s).
// A clipboard failure (or no clipboard) is ignored: the confirmation still shows.
export function useCopied(resetMs = 1500) {
  const [copied, setCopied] = useState(false);
  const copy = useCallback(
    async (value: string) => {
      await navigator.clipboard?.writeText(value).catch(() => undefined);
      setCopied(true);
      setTimeout(() => setCopied(false), resetMs);
    },
    [resetMs],
  );
  return { copied, copy };
}

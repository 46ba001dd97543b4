'use client';

import { useCallback, useEffect, useRef, useState } from 'react';

export type CopyState = 'idle' | 'copied' | 'failed';

// The Clipboard API exists only in secure contexts (https, localhost); a dashboard served over plain
// http on another host has none, so the older copy command on a hidden text area is tried next.
async function writeClipboard(value: string): Promise<boolean> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch {
      // Refused (no permission, document not focused): try the copy command.
    }
  }
  const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const area = document.createElement('textarea');
  area.value = value;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  active?.focus();
  return copied;
}

// Copies text to the clipboard and reports for a moment afterwards (1.5 s, 4 s for a failure)
// whether it worked: a button that says "Copied" when nothing was copied would lose a secret.
export function useCopied(resetMs = 1500) {
  const [state, setState] = useState<CopyState>('idle');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = useCallback(
    async (value: string) => {
      const ok = await writeClipboard(value);
      setState(ok ? 'copied' : 'failed');
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setState('idle'), ok ? resetMs : resetMs * 3);
    },
    [resetMs],
  );
  return { state, copied: state === 'copied', failed: state === 'failed', copy };
}

'use client';

import { useEffect, useId, useRef } from 'react';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';

// A freshly created secret with the "copy it now" warning: the server never returns it again.
export function SecretOnce({
  secret,
  testId,
  noun = 'key',
  ifLost = 'If you lose it, revoke it and create a new one.',
  noticeId,
}: {
  secret: string;
  testId: string;
  noun?: string;
  ifLost?: string;
  /** Lets the card that takes focus after creation read the notice as its description. */
  noticeId?: string;
}) {
  return (
    <>
      <Alert id={noticeId} tone="warning" title={`Copy this ${noun} now`}>
        It is shown once: you will not be able to see it again. {ifLost}
      </Alert>
      <div className="secret-box">
        <code data-testid={testId}>{secret}</code>
        <CopyButton value={secret} label={`Copy ${noun}`} />
      </div>
    </>
  );
}

// The card that shows a new secret takes focus when it appears (the create dialog would hand focus back
// to its opener, elsewhere on the page), described by the secret's "copy it now" notice, so a screen
// reader reads where the secret is and that it is shown once. Spread `cardProps` on the card and pass
// `noticeId` to SecretOnce.
export function useNewSecretCard(secret: string) {
  const ref = useRef<HTMLDivElement>(null);
  const noticeId = useId();
  useEffect(() => {
    const frame = requestAnimationFrame(() => ref.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, [secret]);
  return { noticeId, cardProps: { ref, tabIndex: -1, 'aria-describedby': noticeId } };
}

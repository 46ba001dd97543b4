'use client';

import type { ComponentProps } from 'react';
import { Button } from '@/components/ui/Button';
import { CheckIcon, CopyIcon } from '@/components/ui/icons';
import { useCopied, type CopyState } from '@/components/ui/useCopied';

const statusText: Record<CopyState, string> = {
  idle: '',
  copied: 'Copied to the clipboard',
  failed: 'Could not copy: select the text and copy it with your keyboard',
};

// A polite live region that says whether a copy worked: the button's changed label alone is not
// announced. It is always rendered, so its first message is read too.
export function CopyStatus({ state }: { state: CopyState }) {
  return (
    <span className="visually-hidden" role="status">
      {statusText[state]}
    </span>
  );
}

export function CopyButton({
  value,
  label = 'Copy',
  copiedLabel = 'Copied',
  size = 'sm',
}: {
  value: string;
  label?: string;
  copiedLabel?: string;
  size?: 'sm' | 'md';
}) {
  const { state, copy } = useCopied();
  return (
    <>
      <Button
        size={size}
        icon={state === 'copied' ? <CheckIcon size={14} /> : <CopyIcon size={14} />}
        onClick={() => copy(value)}
      >
        {state === 'copied' ? copiedLabel : state === 'failed' ? 'Copy failed' : label}
      </Button>
      <CopyStatus state={state} />
    </>
  );
}

// An id shown in code with a small copy button beside it (organization ids, split ids).
export function CopyId({
  value,
  label,
  className,
  ...rest
}: { value: string; label: string } & Omit<ComponentProps<'span'>, 'children'>) {
  const { state, copy } = useCopied();
  return (
    <span className={['copy-id', className].filter(Boolean).join(' ')} {...rest}>
      <code title={value}>{value}</code>
      <button
        type="button"
        className="icon-button"
        aria-label={state === 'copied' ? 'Copied' : label}
        onClick={() => copy(value)}
      >
        {state === 'copied' ? <CheckIcon size={13} /> : <CopyIcon size={13} />}
      </button>
      <CopyStatus state={state} />
    </span>
  );
}

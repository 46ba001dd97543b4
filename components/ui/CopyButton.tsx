'use client';

import { Button } from '@/components/ui/Button';
import { CheckIcon, CopyIcon } from '@/components/ui/icons';
import { useCopied } from '@/components/ui/useCopied';

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
  const { copied, copy } = useCopied();
  return (
    <Button size={size} icon={copied ? <CheckIcon size={14} /> : <CopyIcon size={14} />} onClick={() => copy(value)}>
      {copied ? copiedLabel : label}
    </Button>
  );
}

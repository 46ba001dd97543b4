'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/Button';
import { CheckIcon, CopyIcon } from '@/components/ui/icons';

export function CopyButton({ value, label = 'Copy', copiedLabel = 'Copied', size = 'sm' }: { value: string; label?: string; copiedLabel?: string; size?: 'sm' | 'md' }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      size={size}
      icon={copied ? <CheckIcon size={14} /> : <CopyIcon size={14} />}
      onClick={async () => {
        await navigator.clipboard?.writeText(value).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? copiedLabel : label}
    </Button>
  );
}

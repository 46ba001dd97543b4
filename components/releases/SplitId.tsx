'use client';

import { CheckIcon, CopyIcon } from '@/components/ui/icons';
import { useCopied } from '@/components/ui/useCopied';

// A split's id (spl_…), copyable: retrieval bodies and split stats name it.
export function SplitId({ value }: { value: string }) {
  const { copied, copy } = useCopied();
  return (
    <span className="copy-id traffic-id" data-split-id={value}>
      <code title={value}>{value}</code>
      <button
        type="button"
        className="icon-button"
        aria-label={copied ? 'Copied' : 'Copy split ID'}
        onClick={() => copy(value)}
      >
        {copied ? <CheckIcon size={13} /> : <CopyIcon size={13} />}
      </button>
    </span>
  );
}

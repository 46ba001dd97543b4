'use client';

import { CopyId } from '@/components/ui/CopyButton';

// A split's id (spl_…), copyable: retrieval bodies and split stats name it.
export function SplitId({ value }: { value: string }) {
  return <CopyId value={value} label="Copy split ID" className="traffic-id" data-split-id={value} />;
}

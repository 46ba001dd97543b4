import type { ReactNode } from 'react';

// One term and its value in a span panel's fact list; nothing when the value is empty.
export function Fact({ label, children }: { label: string; children: ReactNode }) {
  if (children === null || children === undefined || children === '') return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

export const mono = (value: string | null) => (value ? <code className="mono-sm">{value}</code> : null);

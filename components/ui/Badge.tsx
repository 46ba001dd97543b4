import type { ReactNode } from 'react';
import { planName } from '@/components/format';

export type BadgeTone = 'neutral' | 'accent' | 'success' | 'warning' | 'danger';

export function Badge({
  tone = 'neutral',
  children,
  title,
}: {
  tone?: BadgeTone;
  children: ReactNode;
  title?: string;
}) {
  return (
    <span className={['badge', tone !== 'neutral' && `badge-${tone}`].filter(Boolean).join(' ')} title={title}>
      {children}
    </span>
  );
}

const roleTone: Record<string, BadgeTone> = { admin: 'accent', editor: 'success', viewer: 'neutral' };
const roleLabel: Record<string, string> = { admin: 'Admin', editor: 'Editor', viewer: 'Viewer' };

export function RoleBadge({ role }: { role: string }) {
  return <Badge tone={roleTone[role] ?? 'neutral'}>{roleLabel[role] ?? role}</Badge>;
}

export function PlanBadge({ plan }: { plan: string }) {
  return <Badge tone={plan === 'pro' ? 'warning' : 'neutral'}>{planName(plan)}</Badge>;
}

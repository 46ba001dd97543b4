import type { Metadata } from 'next';
import { AuditLogPage } from '@/components/audit/AuditLogPage';

export const metadata: Metadata = { title: 'Audit log' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <AuditLogPage organizationId={orgId} />;
}

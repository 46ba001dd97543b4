import type { Metadata } from 'next';
import { AuthorizedAppsPage } from '@/components/oauth/AuthorizedAppsPage';

export const metadata: Metadata = { title: 'Authorized applications' };

export default function Page() {
  return <AuthorizedAppsPage />;
}

import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { TrpcReactProvider } from '@/lib/trpc/client';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Promptloop', template: '%s · Promptloop' },
  description: 'Manage, evaluate and ship prompts with your team.',
};

export const viewport: Viewport = { themeColor: '#4f46e5' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TrpcReactProvider>{children}</TrpcReactProvider>
      </body>
    </html>
  );
}

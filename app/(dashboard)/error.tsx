'use client';

import { Button, ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { ErrorState } from '@/components/ui/States';

export default function DashboardError({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="page">
      <Card>
        <ErrorState
          title="This page could not be shown"
          description="Something went wrong on our side. Try again, or go back to your organizations."
          action={
            <div className="inline">
              <Button variant="primary" onClick={reset}>
                Try again
              </Button>
              <ButtonLink href="/organizations">Your organizations</ButtonLink>
            </div>
          }
        />
      </Card>
    </div>
  );
}

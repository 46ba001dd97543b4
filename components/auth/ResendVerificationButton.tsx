'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { Button } from '@/components/ui/Button';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

// "Resend email" for the signed-in person's verification link, with its outcome next to it.
export function ResendVerificationButton({
  size = 'sm',
  variant = 'secondary',
}: {
  size?: 'sm' | 'md';
  variant?: 'secondary' | 'primary';
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const resend = useMutation(
    trpc.account.resendVerification.mutationOptions({
      onSuccess: (result) => {
        if (result.alreadyVerified) router.refresh();
        return queryClient.invalidateQueries(trpc.account.emailStatus.queryFilter());
      },
    }),
  );
  const error = readAppError(resend.error);
  const status = error
    ? error.code === 'rate_limited'
      ? 'Too many emails. Wait a few minutes and try again.'
      : error.message
    : resend.data?.alreadyVerified
      ? 'Your address is already confirmed.'
      : resend.data?.sent
        ? 'Sent. Check your inbox.'
        : resend.data
          ? 'We could not send the email. Try again in a moment.'
          : null;
  return (
    <span className="inline">
      {status ? (
        <span
          className={
            error || (resend.data && !resend.data.sent && !resend.data.alreadyVerified) ? 'field-error' : 'muted'
          }
          role="status"
        >
          {status}
        </span>
      ) : null}
      <Button size={size} variant={variant} loading={resend.isPending} onClick={() => resend.mutate()}>
        Resend email
      </Button>
    </span>
  );
}

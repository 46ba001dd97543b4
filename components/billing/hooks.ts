'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';

// After Stripe's checkout the plan changes when its webhook arrives: poll every 2 s, for a minute at most.
const pollEveryMs = 2_000;
const waitAtMostMs = 60_000;

export function useBillingState(organizationId: string, { waitForPro }: { waitForPro: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [round, setRound] = useState(0);
  const [expired, setExpired] = useState(false);
  useEffect(() => {
    if (!waitForPro) return;
    setExpired(false);
    const timer = setTimeout(() => setExpired(true), waitAtMostMs);
    return () => clearTimeout(timer);
  }, [waitForPro, round]);

  const query = useQuery({
    ...trpc.billing.state.queryOptions({ organizationId }),
    staleTime: 0,
    refetchInterval: (q) => (waitForPro && !expired && q.state.data?.plan !== 'pro' ? pollEveryMs : false),
  });

  // The organization's plan is shown elsewhere (overview, run dialog): refresh it when it changes here.
  const plan = query.data?.plan;
  const lastPlan = useRef(plan);
  useEffect(() => {
    if (plan && lastPlan.current && lastPlan.current !== plan)
      void queryClient.invalidateQueries(trpc.organizations.pathFilter());
    lastPlan.current = plan;
  }, [plan, queryClient, trpc]);

  const waiting = waitForPro && plan !== 'pro' && !expired;
  return {
    query,
    waiting,
    gaveUp: waitForPro && plan !== 'pro' && expired,
    // Polls for another minute.
    waitAgain: () => {
      setRound((n) => n + 1);
      void query.refetch();
    },
  };
}

export function isNotConfigured(error: AppErrorInfo | null): boolean {
  return error?.code === 'unavailable' && error.details.reason === 'billing_not_configured';
}

// What a failed checkout or portal request tells the person (billing_not_configured has its own banner).
export function redirectErrorText(error: AppErrorInfo): string {
  if (error.code === 'unavailable') {
    return error.details.reason === 'payment_provider_error'
      ? 'Stripe answered with an error. Nothing was charged; try again in a moment.'
      : 'Stripe could not be reached. Nothing was charged; try again in a moment.';
  }
  if (error.code === 'invalid_state' && error.details.state === 'no_customer')
    return 'There is no payment method on file yet: upgrade first.';
  return error.message;
}

// Checkout and the customer portal both answer a Stripe page to send the browser to.
export function useStripeRedirects(organizationId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [redirecting, setRedirecting] = useState<'checkout' | 'portal' | null>(null);
  const [error, setError] = useState<AppErrorInfo | null>(null);
  // Coming back from Stripe with the browser's Back button restores this page as it was left.
  useEffect(() => {
    const restored = (event: PageTransitionEvent) => event.persisted && setRedirecting(null);
    window.addEventListener('pageshow', restored);
    return () => window.removeEventListener('pageshow', restored);
  }, []);
  const options = {
    onMutate: () => setError(null),
    onSuccess: ({ url }: { url: string }) => window.location.assign(url),
    onError: (e: unknown) => {
      const info = readAppError(e);
      setError(info);
      setRedirecting(null);
      // Already on Pro, or no customer yet: what this page shows is out of date.
      if (info?.code === 'invalid_state') {
        void queryClient.invalidateQueries(trpc.billing.state.queryFilter({ organizationId }));
        void queryClient.invalidateQueries(trpc.organizations.pathFilter());
      }
    },
  };
  const checkout = useMutation(trpc.billing.checkout.mutationOptions(options));
  const portal = useMutation(trpc.billing.portal.mutationOptions(options));
  return {
    error,
    notConfigured: isNotConfigured(error),
    upgrading: checkout.isPending || redirecting === 'checkout',
    openingPortal: portal.isPending || redirecting === 'portal',
    upgrade: () => {
      setRedirecting('checkout');
      checkout.mutate({ organizationId, plan: 'pro' });
    },
    openPortal: () => {
      setRedirecting('portal');
      portal.mutate({ organizationId });
    },
  };
}

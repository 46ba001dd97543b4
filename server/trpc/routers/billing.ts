import { getBillingState } from '@/server/billing/state';
import { cancelRenewal, createCheckout, createPortalSession } from '@/server/billing/service';
import { cancelRenewalBody, checkoutBody } from '@/server/billing/schemas';
import { protectedProcedure, router } from '../init';
import { orgIdInput } from './paging';

// The dashboard's billing page: the same services as the management API.
export const billingRouter = router({
  state: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => getBillingState(ctx, input.organizationId)),
  // Outside the edge transaction: Stripe is called with no transaction open (services write after).
  checkout: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput.extend(checkoutBody.shape))
    .mutation(({ ctx, input }) => createCheckout(ctx, input.organizationId, { plan: input.plan })),
  portal: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput)
    .mutation(({ ctx, input }) => createPortalSession(ctx, input.organizationId)),
  cancelRenewal: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput.extend(cancelRenewalBody.shape))
    .mutation(({ ctx, input }) => cancelRenewal(ctx, input.organizationId, { organizationName: input.organizationName, periodEnd: input.periodEnd })),
});

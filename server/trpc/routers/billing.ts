import { getBillingState } from '@/server/billing/state';
import { cancelRenewal, createCheckout, createPortalSession } from '@/server/billing/service';
import { cancelRenewalBody, checkoutBody } from '@/server/billing/schemas';
import { protectedProcedure, router } from '../init';
import { orgIdInput, withoutDirection } from './paging';

// The dashboard's billing page: the same services as the management API.
export const billingRouter = router({
  state: protectedProcedure.input(orgIdInput).query(({ ctx, input }) => getBillingState(ctx, withoutDirection(input))),
  // Outside the edge transaction: Stripe is called with no transaction open (services write after).
  checkout: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput.extend(checkoutBody.shape))
    .mutation(({ ctx, input }) => createCheckout(ctx, withoutDirection(input))),
  portal: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput)
    .mutation(({ ctx, input }) => createPortalSession(ctx, withoutDirection(input))),
  cancelRenewal: protectedProcedure
    .meta({ transaction: false })
    .input(orgIdInput.extend(cancelRenewalBody.shape))
    .mutation(({ ctx, input }) => cancelRenewal(ctx, withoutDirection(input))),
});

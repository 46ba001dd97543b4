import { billingStateSchema, cancelRenewalBody, checkoutBody, redirectUrlSchema } from '../billing/schemas';
import { declareOperations } from './declare';
import { orgParams } from './common';

export const billingOperations = declareOperations({
  get_billing: {
    method: 'GET',
    path: '/organizations/{organizationId}/billing',
    summary: 'Get the billing state: plan, period, renewal and evaluation credits',
    description:
      'Persisted Stripe webhook state is the only truth about the plan. `status` is the subscription status (null on Free); `periodEnd` is the current period end (the end of the calendar month, UTC, on Free); `renewsAt` is `periodEnd` unless renewal is cancelled. One credit is one case executed on one side of an evaluation.',
    params: orgParams,
    status: 200,
    response: billingStateSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['billing', 'get'], positional: [] },
    dashboard: 'billing.state',
  },
  create_billing_checkout: {
    method: 'POST',
    path: '/organizations/{organizationId}/billing/checkout',
    summary: 'Start a Stripe Checkout for the Pro plan (admin only); payment completes in the browser',
    description:
      'Answers the Checkout page to open. The plan changes only when Stripe reports the paid subscription through its webhook. 409 invalid_state when the organization is already on Pro; 503 unavailable (`details.reason: billing_not_configured`) when this server has no Stripe key.',
    params: orgParams,
    body: checkoutBody,
    status: 201,
    response: redirectUrlSchema,
    errors: ['invalid_request', 'admin_required', 'not_found', 'read_only', 'invalid_state', 'unavailable'],
    role: 'admin',
    effect: 'write',
    transaction: false,
    cli: { command: ['billing', 'checkout'], positional: [] },
    dashboard: 'billing.checkout',
  },
  create_billing_portal_session: {
    method: 'POST',
    path: '/organizations/{organizationId}/billing/portal',
    summary: "Open Stripe's customer portal (admin only): payment method and invoices",
    description:
      '409 invalid_state (`no_customer`) before the first checkout; 503 unavailable when this server has no Stripe key.',
    params: orgParams,
    status: 201,
    response: redirectUrlSchema,
    errors: ['admin_required', 'not_found', 'invalid_state', 'unavailable'],
    role: 'admin',
    effect: 'write',
    transaction: false,
    cli: { command: ['billing', 'portal'], positional: [] },
    dashboard: 'billing.portal',
  },
  cancel_subscription_renewal: {
    method: 'POST',
    path: '/organizations/{organizationId}/billing/cancel-renewal',
    summary: 'Cancel renewal at the end of the paid period (confirmation required)',
    description:
      "`organizationName` must be the organization's exact name and `periodEnd` the current period end (the same instant to the second, or its UTC date `YYYY-MM-DD`), else 422 confirmation_mismatch. The plan stays Pro until the period ends. Editors and admins; a viewer gets 403 forbidden. 409 invalid_state without an active subscription.",
    params: orgParams,
    body: cancelRenewalBody,
    status: 200,
    response: billingStateSchema,
    errors: ['invalid_request', 'forbidden', 'not_found', 'invalid_state', 'confirmation_mismatch', 'unavailable'],
    role: 'editor',
    effect: 'destroys',
    transaction: false,
    cli: { command: ['billing', 'cancel-renewal'], positional: [] },
    dashboard: 'billing.cancelRenewal',
  },
});

import { z } from 'zod';
import { getProfile, resolveDefaultOrganization, setDefaultOrganization, signUp } from '@/server/account/service';
import { afterSignUp, getEmailStatus, resendVerification, verifyEmail } from '@/server/account/email-verification';
import { checkResetLink, requestPasswordReset, resetPassword } from '@/server/account/password-reset';
import { setDefaultOrganizationInput } from '@/server/orgs/schemas';
import { protectedProcedure, publicProcedure, router } from '../init';
import { withoutDirection } from './paging';

// The password rules live in the service, so its message is the one shown next to the field.
const signUpInput = z.strictObject({
  email: z.string().trim().min(1, 'Enter your email address.').email('Enter a valid email address.').max(320),
  password: z.string().min(1, 'Choose a password.'),
  name: z.string().trim().max(160, 'Use at most 160 characters.').optional(),
});

const tokenInput = z.strictObject({ token: z.string().min(1, 'This link is not valid.').max(200, 'This link is not valid.') });

const forgotPasswordInput = z.strictObject({
  email: z.string().trim().min(1, 'Enter your email address.').email('Enter a valid email address.').max(320),
});

const resetPasswordInput = tokenInput.extend({ password: z.string().min(1, 'Choose a new password.') });

export const accountRouter = router({
  // Outside the edge transaction: the account flows count attempts through the root handle.
  signUp: publicProcedure
    .meta({ transaction: false })
    .input(signUpInput)
    .mutation(async ({ ctx, input }) => afterSignUp(ctx, await signUp(ctx.db, input, { clientIp: ctx.clientIp }))),
  profile: protectedProcedure.query(({ ctx }) => getProfile(ctx)),
  defaultOrganization: protectedProcedure.query(({ ctx }) => resolveDefaultOrganization(ctx)),
  setDefaultOrganization: protectedProcedure.input(setDefaultOrganizationInput).mutation(({ ctx, input }) => setDefaultOrganization(ctx, withoutDirection(input))),
  // Email verification and password reset (API.md "Accounts and email").
  emailStatus: protectedProcedure.query(({ ctx }) => getEmailStatus(ctx)),
  resendVerification: protectedProcedure.meta({ transaction: false }).mutation(({ ctx }) => resendVerification(ctx)),
  verifyEmail: publicProcedure.input(tokenInput).mutation(({ ctx, input }) => verifyEmail(ctx, input.token)),
  requestPasswordReset: publicProcedure
    .meta({ transaction: false })
    .input(forgotPasswordInput)
    .mutation(async ({ ctx, input }) => requestPasswordReset(ctx, { email: input.email, clientIp: ctx.clientIp })),
  checkResetLink: publicProcedure.input(tokenInput).query(({ ctx, input }) => checkResetLink(ctx, input.token)),
  resetPassword: publicProcedure.input(resetPasswordInput).mutation(({ ctx, input }) => resetPassword(ctx, input)),
});

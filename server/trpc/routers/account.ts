import { z } from 'zod';
import { signUp } from '@/server/account/service';
import { afterSignUp, getEmailStatus, resendVerification, verifyEmail } from '@/server/account/email-verification';
import { checkResetLink, requestPasswordReset, resetPassword } from '@/server/account/password-reset';
import { changePassword, getAccountSettings, setAccountName } from '@/server/account/settings';
import { protectedProcedure, publicProcedure } from '../init';

// The password rules live in the service, so its message is the one shown next to the field.
const signUpInput = z.strictObject({
  email: z.string().trim().min(1, 'Enter your email address.').email('Enter a valid email address.').max(320),
  password: z.string().min(1, 'Choose a password.'),
  name: z.string().trim().max(160, 'Use at most 160 characters.').optional(),
});

const tokenInput = z.strictObject({
  token: z.string().min(1, 'This link is not valid.').max(200, 'This link is not valid.'),
});

const forgotPasswordInput = z.strictObject({
  email: z.string().trim().min(1, 'Enter your email address.').email('Enter a valid email address.').max(320),
});

const resetPasswordInput = tokenInput.extend({ password: z.string().min(1, 'Choose a new password.') });

const setNameInput = z.strictObject({ name: z.string().max(160, 'Use at most 160 characters.') });

const changePasswordInput = z.strictObject({
  currentPassword: z.string().min(1, 'Enter your current password.').max(1000),
  newPassword: z.string().min(1, 'Choose a new password.'),
});

// The account's dashboard-only procedures; profile and default organization come from the table.
export const accountProcedures = {
  // Outside the edge transaction: the account flows count attempts through the root handle.
  signUp: publicProcedure
    .meta({ transaction: false })
    .input(signUpInput)
    .mutation(async ({ ctx, input }) => afterSignUp(ctx, await signUp(ctx.db, input, { clientIp: ctx.clientIp }))),
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
  // The account page's settings: display name and password.
  settings: protectedProcedure.query(({ ctx }) => getAccountSettings(ctx)),
  setName: protectedProcedure.input(setNameInput).mutation(({ ctx, input }) => setAccountName(ctx, input)),
  // Outside the edge transaction: a wrong current password must stay counted (the service opens its own).
  changePassword: protectedProcedure
    .meta({ transaction: false })
    .input(changePasswordInput)
    .mutation(({ ctx, input }) => changePassword(ctx, input)),
};

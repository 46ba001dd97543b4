import { z } from 'zod';
import { getProfile, resolveDefaultOrganization, setDefaultOrganization, signUp } from '@/server/account/service';
import { setDefaultOrganizationInput } from '@/server/orgs/schemas';
import { protectedProcedure, publicProcedure, router } from '../init';

// The password rules live in the service, so its message is the one shown next to the field.
const signUpInput = z.strictObject({
  email: z.string().trim().min(1, 'Enter your email address.').email('Enter a valid email address.').max(320),
  password: z.string().min(1, 'Choose a password.'),
  name: z.string().trim().max(160, 'Use at most 160 characters.').optional(),
});

export const accountRouter = router({
  signUp: publicProcedure.input(signUpInput).mutation(({ ctx, input }) => signUp(ctx.db, input, { clientIp: ctx.clientIp })),
  profile: protectedProcedure.query(({ ctx }) => getProfile(ctx)),
  defaultOrganization: protectedProcedure.query(({ ctx }) => resolveDefaultOrganization(ctx)),
  setDefaultOrganization: protectedProcedure.input(setDefaultOrganizationInput).mutation(({ ctx, input }) => setDefaultOrganization(ctx, input)),
});

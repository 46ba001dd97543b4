import { createCallerFactory, router } from './init';
import { accountRouter } from './routers/account';
import { auditRouter } from './routers/audit';
import { membersRouter } from './routers/members';
import { organizationsRouter } from './routers/organizations';

export const appRouter = router({
  account: accountRouter,
  organizations: organizationsRouter,
  members: membersRouter,
  audit: auditRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

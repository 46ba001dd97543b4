import { createCallerFactory, router } from './init';
import { accountRouter } from './routers/account';
import { auditRouter } from './routers/audit';
import { datasetsRouter } from './routers/datasets';
import { ingestionKeysRouter } from './routers/ingestionKeys';
import { membersRouter } from './routers/members';
import { modelsRouter } from './routers/models';
import { organizationsRouter } from './routers/organizations';
import { playgroundRouter } from './routers/playground';
import { promptsRouter } from './routers/prompts';
import { retrievalKeysRouter } from './routers/retrievalKeys';
import { tracesRouter } from './routers/traces';
import { versionsRouter } from './routers/versions';
import { evalsRouter } from './routers/evals';
import { warningsRouter } from './routers/warnings';
import { authorizedAppsRouter } from './routers/authorizedApps';
import { billingRouter } from './routers/billing';
import { serviceAccountsRouter } from './routers/serviceAccounts';

export const appRouter = router({
  account: accountRouter,
  organizations: organizationsRouter,
  members: membersRouter,
  audit: auditRouter,
  prompts: promptsRouter,
  datasets: datasetsRouter,
  models: modelsRouter,
  playground: playgroundRouter,
  ingestionKeys: ingestionKeysRouter,
  retrievalKeys: retrievalKeysRouter,
  traces: tracesRouter,
  versions: versionsRouter,
  evals: evalsRouter,
  warnings: warningsRouter,
  authorizedApps: authorizedAppsRouter,
  billing: billingRouter,
  serviceAccounts: serviceAccountsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

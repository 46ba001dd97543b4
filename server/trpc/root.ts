import { createCallerFactory, router } from './init';
import { operationProcedures } from './operations';
import { accountProcedures } from './routers/account';
import { auditRouter } from './routers/audit';
import { authorizedAppsRouter } from './routers/authorizedApps';
import { datasetProcedures } from './routers/datasets';
import { evalProcedures } from './routers/evals';
import { invitationProcedures } from './routers/invitations';
import { organizationProcedures } from './routers/organizations';
import { playgroundRouter } from './routers/playground';
import { traceProcedures } from './routers/traces';
import { warningProcedures } from './routers/warnings';

// The dashboard's API: every operation of the table (generated, server/trpc/operations.ts) plus the
// dashboard-only procedures written by hand (sign-up and email flows, deletion by link, import
// preview, playground, audit log, authorized applications, small lookups for the navigation).
const table = operationProcedures();

export const appRouter = router({
  ...table,
  account: { ...table.account, ...accountProcedures },
  organizations: { ...table.organizations, ...organizationProcedures },
  members: { ...table.members, ...invitationProcedures },
  datasets: { ...table.datasets, ...datasetProcedures },
  evals: { ...table.evals, ...evalProcedures },
  traces: { ...table.traces, ...traceProcedures },
  warnings: { ...table.warnings, ...warningProcedures },
  audit: auditRouter,
  playground: playgroundRouter,
  authorizedApps: authorizedAppsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

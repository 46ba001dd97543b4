import { z } from 'zod';
import { defineRoute, type Route } from '../define';
import { pageOf } from '../../orgs/schemas';
import { dismissWarning, listWarnings } from '../../warnings/service';
import { listWarningsQuery, warningSchema } from '../../warnings/schemas';
import { management, orgParams } from './common';

const warningParams = z.strictObject({ organizationId: z.string(), warningId: z.string() });

export const warningRoutes: Route[] = [
  defineRoute({
    ...management,
    method: 'GET',
    path: '/organizations/{organizationId}/warnings',
    operationId: 'list_warnings',
    summary: 'List operational warnings, most recently seen first (open ones by default)',
    description:
      'One item per (kind, subject): `count` is the number of distinct occurrences, `firstSeenAt` / `lastSeenAt` the first and latest, `resolvedAt` set once the cause went away (or the warning was dismissed); a resolved warning reopens on its next occurrence. `state` is `open` (default), `resolved` or `all`; `kind` filters one kind.',
    params: orgParams,
    query: listWarningsQuery,
    status: 200,
    response: pageOf(warningSchema),
    errors: ['not_found'],
    handler: ({ ctx, params, query }) => listWarnings(ctx, params.organizationId, query),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: '/organizations/{organizationId}/warnings/{warningId}/resolve',
    operationId: 'resolve_warning',
    summary: 'Dismiss a warning (editors and admins): it is resolved now and reopens on its next occurrence',
    description: 'For causes the service cannot see go away, such as an archived prompt still retrieved by an old deployment. Dismissing a resolved warning returns it unchanged.',
    params: warningParams,
    status: 200,
    response: warningSchema,
    errors: ['forbidden', 'not_found', 'read_only'],
    handler: ({ ctx, params }) => dismissWarning(ctx, params.organizationId, params.warningId),
  }),
];

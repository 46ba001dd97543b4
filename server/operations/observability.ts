import { z } from 'zod';
import { pageOf } from '../paging';
import { getTraceQuery, listTracesQuery, traceListItemSchema, traceSchema, traceSpanPageSize } from '../traces/schemas';
import { listWarningsQuery, warningSchema } from '../warnings/schemas';
import { declareOperations } from './declare';
import { orgParams } from './common';

const traceParams = z.strictObject({ organizationId: z.string(), traceId: z.string() });
const warningParams = z.strictObject({ organizationId: z.string(), warningId: z.string() });

export const traceOperations = declareOperations({
  list_traces: {
    method: 'GET',
    path: '/organizations/{organizationId}/traces',
    summary: 'List traces as root summaries, newest first',
    description:
      'One item per trace: name, service, status and ids from the root span (the earliest span while the root has not arrived); times, span count, tokens and cost aggregated over all spans. `kind` keeps traces that contain a span of that kind; `from`/`to` filter the trace start (Unix ms, inclusive).',
    params: orgParams,
    query: listTracesQuery,
    status: 200,
    response: pageOf(traceListItemSchema),
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['traces', 'list'], positional: [] },
    dashboard: 'traces.list',
  },
  get_trace: {
    method: 'GET',
    path: '/organizations/{organizationId}/traces/{traceId}',
    summary: 'Get one trace: a page of its stored spans (latest snapshot of each)',
    description: `At most ${traceSpanPageSize} spans per page, ordered by startedAt, then spanId; \`nextCursor\` continues with the next page (null on the last). \`spanCount\` counts every span of the trace.`,
    params: traceParams,
    query: getTraceQuery,
    status: 200,
    response: traceSchema,
    errors: ['invalid_request', 'not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['traces', 'get'], positional: ['traceId'] },
    dashboard: 'traces.get',
  },
});

export const warningOperations = declareOperations({
  list_warnings: {
    method: 'GET',
    path: '/organizations/{organizationId}/warnings',
    summary: 'List operational warnings, most recently seen first (open ones by default)',
    description:
      'One item per (kind, subject): `count` is the number of distinct occurrences, `firstSeenAt` / `lastSeenAt` the first and latest, `resolvedAt` set once the cause went away (or the warning was dismissed); a resolved warning reopens on its next occurrence. `state` is `open` (default), `resolved` or `all`; `kind` filters one kind.',
    params: orgParams,
    query: listWarningsQuery,
    status: 200,
    response: pageOf(warningSchema),
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['warnings', 'list'], positional: [] },
    dashboard: 'warnings.list',
  },
  resolve_warning: {
    method: 'POST',
    path: '/organizations/{organizationId}/warnings/{warningId}/resolve',
    summary: 'Dismiss a warning (editors and admins): it is resolved now and reopens on its next occurrence',
    description:
      'For causes the service cannot see go away, such as an archived prompt still retrieved by an old deployment. Dismissing a resolved warning returns it unchanged.',
    params: warningParams,
    status: 200,
    response: warningSchema,
    errors: ['forbidden', 'not_found', 'read_only'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['warnings', 'resolve'], positional: ['warningId'] },
    dashboard: 'warnings.dismiss',
  },
});

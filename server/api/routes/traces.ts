import { z } from 'zod';
import { defineRoute, type Route } from '../define';
import { pageOf } from '../../orgs/schemas';
import { getTrace, listTraces } from '../../traces/query';
import { getTraceQuery, listTracesQuery, traceListItemSchema, traceSchema, traceSpanPageSize } from '../../traces/schemas';
import { management, orgParams } from './common';

const traceParams = z.strictObject({ organizationId: z.string(), traceId: z.string() });

export const traceRoutes: Route[] = [
  defineRoute({
    ...management,
    method: 'GET',
    path: '/organizations/{organizationId}/traces',
    operationId: 'list_traces',
    summary: 'List traces as root summaries, newest first',
    description:
      'One item per trace: name, service, status and ids from the root span (the earliest span while the root has not arrived); times, span count, tokens and cost aggregated over all spans. `kind` keeps traces that contain a span of that kind; `from`/`to` filter the trace start (Unix ms, inclusive).',
    params: orgParams,
    query: listTracesQuery,
    status: 200,
    response: pageOf(traceListItemSchema),
    errors: ['not_found'],
    handler: ({ ctx, params, query }) => listTraces(ctx, params.organizationId, query),
  }),
  defineRoute({
    ...management,
    method: 'GET',
    path: '/organizations/{organizationId}/traces/{traceId}',
    operationId: 'get_trace',
    summary: 'Get one trace: a page of its stored spans (latest snapshot of each)',
    description: `At most ${traceSpanPageSize} spans per page, ordered by startedAt, then spanId; \`nextCursor\` continues with the next page (null on the last). \`spanCount\` counts every span of the trace.`,
    params: traceParams,
    query: getTraceQuery,
    status: 200,
    response: traceSchema,
    errors: ['invalid_request', 'not_found'],
    handler: ({ ctx, params, query }) => getTrace(ctx, params.organizationId, params.traceId, query),
  }),
];

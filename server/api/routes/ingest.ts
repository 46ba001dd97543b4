import { z } from 'zod';
import type { Route } from '../define';
import { traceBatchSchema } from '../../traces/ingest-schema';
import { ingestFromRequest } from '../ingest';

// POST /api/v1/traces in Next's catch-all. Production serves the same handler from node:http
// before Next (server/main.ts); this entry keeps `next dev` working and feeds the OpenAPI document.
export const ingestRoutes: Route[] = [
  {
    method: 'POST',
    path: '/traces',
    operationId: 'ingest_traces',
    summary: 'Send a batch of span snapshots',
    description:
      'Credential: `Authorization: Bearer plt_…` (ingestion key). Uncompressed JSON, at most 1 MiB, 1 to 50 events. ' +
      'The whole batch is stored or nothing is. 400 invalid JSON or span values (`details.issues`); 401 key invalid or revoked; ' +
      '403 `read_only`; 409 `invalid_state` with `details.state` one of `revision_conflict`, `identity_changed`, `reopened`, `clock_ahead`; ' +
      '413 body over 1 MiB; 415 not uncompressed application/json; 429 and 503 carry Retry-After: retry the identical batch with backoff.',
    tag: 'Ingestion',
    auth: 'ingestion',
    body: traceBatchSchema,
    status: 200,
    response: z.object({ accepted: z.int().min(1).max(50).describe('Number of events in the acknowledged batch') }),
    errors: [
      'invalid_request',
      'unauthorized',
      'read_only',
      'invalid_state',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'unavailable',
    ],
    handle: (request) => ingestFromRequest(request),
  },
];

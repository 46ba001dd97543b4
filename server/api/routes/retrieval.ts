import { z } from 'zod';
import type { Route } from '../define';
import { retrievalFromRequest, retrievalHeaders, retrievalQuery } from '../retrieval';

// GET /api/v1/prompts/{promptId} in Next's catch-all and the in-process router. Production serves
// the same handler from node:http before Next (server/main.ts hot-path table); this entry keeps
// `next dev` working and feeds the OpenAPI document.
const retrievedPrompt = z.object({
  promptId: z.string(),
  name: z.string(),
  versionId: z.string(),
  version: z.int().min(1),
  label: z.string().nullable().describe('The label used (production by default); null when selected by version'),
  split: z
    .object({
      id: z.string().describe('The split (spl_…); a new id whenever the split changes'),
      weight: z.int().min(1).max(99).describe("The chosen version's weight in the split (of 100)"),
    })
    .optional()
    .describe(
      'Only when the label splits its traffic between versions: the split, and the weight of the version chosen',
    ),
  content: z
    .record(z.string(), z.unknown())
    .describe('The version content: messages, inputType, model and settings, tools and maxOutputTokens'),
  createdAt: z.string().describe('When this version was saved'),
});

export const retrievalRoutes: Route[] = [
  {
    method: 'GET',
    path: '/prompts/{promptId}',
    operationId: 'retrieve_prompt',
    summary: 'Retrieve a saved prompt version (production by default)',
    description:
      'Credential: `Authorization: Bearer plr_…` (a retrieval key of this prompt). Give `label` or `version`, never both; with neither the ' +
      '`production` label is resolved. A label move, rollback or revocation counts from the very next request; nothing falls back. ' +
      '200 and 304 carry `ETag` (strong), `Cache-Control: private, no-cache` and `Vary: Authorization`; send the ETag back in ' +
      '`If-None-Match` (weak comparison, lists and `*` accepted) to get `304` when nothing changed. Checks in order: 401 missing, ' +
      'malformed, unknown or revoked key (`WWW-Authenticate: Bearer`); 403 `forbidden` for any other prompt id; 400 `invalid_request` ' +
      'for unknown, duplicate or empty parameters, both selectors, a label outside the pattern or a version below 1; 404 ' +
      '`label_not_assigned` or `version_not_found`; 429 and 503 carry Retry-After. An archived prompt is still served and each ' +
      'use is recorded as an `archived_prompt_used` warning. A label split between versions (traffic split) picks the version ' +
      'for each request: by the `Promptloop-Subject` header (the same subject gets the same version for as long as the split ' +
      'is unchanged: a hash of split id + subject onto the cumulative weights), at random without it; `versionId`, `version` ' +
      "and the ETag are the chosen version's, the body adds `split: { id, weight }`, and `If-None-Match` answers 304 only " +
      'for the chosen version (a tag from before the split still matches when that version is chosen). The ETag and ' +
      '`Vary: Authorization` do not depend on the split or the subject; a 200 or 304 of a split label carries ' +
      '`Promptloop-Split: id=spl_…; weight=N` (absent otherwise), so a copy revalidated by a 304 learns whether a split ' +
      'started, changed or ended. An empty or longer (over 200 characters) ' +
      '`Promptloop-Subject` is 400 `invalid_request` (issue path `Promptloop-Subject`), checked with the parameters.',
    tag: 'Integration',
    auth: 'retrieval',
    params: z.strictObject({ promptId: z.string() }),
    query: retrievalQuery,
    headers: retrievalHeaders,
    status: 200,
    response: retrievedPrompt,
    responseHeaders: {
      ETag: 'Strong tag of the version served (and of what it is served as); send it back in If-None-Match',
      'Cache-Control': '`private, no-cache`: keep a copy, but revalidate it on every use',
      Vary: '`Authorization`',
      'Promptloop-Split':
        'During a traffic split: `id=spl_…; weight=N` of the chosen version (on 200 and 304); absent without a split',
    },
    notModified: 'Not modified: the chosen version matches If-None-Match. No body; the same headers as 200.',
    errors: [
      'invalid_request',
      'unauthorized',
      'forbidden',
      'label_not_assigned',
      'version_not_found',
      'rate_limited',
      'unavailable',
    ],
    handle: (request) => retrievalFromRequest(request),
  },
];

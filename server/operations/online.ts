import {
  caseFromSpanInput,
  onlineEvaluationInput,
  onlineEvaluationSchema,
  onlineScoresQuery,
  onlineScoresSchema,
} from '../online/schemas';
import { datasetCaseResultSchema } from '../datasets/schemas';
import { declareOperations } from './declare';
import { promptParams } from './common';

const base = '/organizations/{organizationId}/prompts/{promptId}';

export const onlineOperations = declareOperations({
  get_online_evaluation: {
    method: 'GET',
    path: `${base}/online-evaluation`,
    summary: 'Get the prompt’s online evaluation of production spans (off by default)',
    params: promptParams,
    status: 200,
    response: onlineEvaluationSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['online-evaluation', 'get'], positional: ['promptId'] },
    dashboard: 'online.get',
  },
  set_online_evaluation: {
    method: 'PUT',
    path: `${base}/online-evaluation`,
    summary: 'Replace the prompt’s online evaluation: score a sample of its production model spans with a judge',
    description:
      'Model spans whose promptVersionId is a version of this prompt and whose content has input and output are sampled by span id (the same span is never scored twice) and scored in the worker after ingestion has answered; one credit per scored span. judgeModelRouteId and rubric default to the scoring policy’s judge route and rubric (else the first available route; 400 when no rubric can be found); an unknown route is 400. Spans ingested while disabled are never scored.',
    params: promptParams,
    body: onlineEvaluationInput,
    status: 200,
    response: onlineEvaluationSchema,
    errors: ['forbidden', 'read_only', 'not_found', 'invalid_state', 'invalid_request'],
    role: 'editor',
    // Turned on, it costs a credit per scored span (MCP clients see a destructive hint).
    effect: 'spends',
    cli: { command: ['online-evaluation', 'set'], positional: ['promptId'] },
    dashboard: 'online.set',
  },
  list_online_scores: {
    method: 'GET',
    path: `${base}/online-scores`,
    summary: 'Daily online-evaluation figures per version (UTC days the spans started)',
    params: promptParams,
    query: onlineScoresQuery,
    status: 200,
    response: onlineScoresSchema,
    errors: ['invalid_request', 'not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['online-evaluation', 'scores'], positional: ['promptId'] },
    dashboard: 'online.scores',
  },
  add_case_from_span: {
    method: 'POST',
    path: `${base}/dataset/cases/from-span`,
    summary: 'Add a dataset case from a production model span: its input, and its output as the expected output',
    description:
      'The span must belong to the organization (else 404) and carry content (else 409 invalid_state, details.state "no_content"). Revision, capacity and duplicate rules as for add case; a duplicate is 409 invalid_state with details.state "duplicate". The case keeps { traceId, spanId } as its source.',
    params: promptParams,
    body: caseFromSpanInput,
    status: 201,
    response: datasetCaseResultSchema,
    errors: ['forbidden', 'read_only', 'not_found', 'invalid_state', 'dataset_conflict', 'invalid_request'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['dataset', 'add-from-span'], positional: ['promptId'] },
    dashboard: 'datasets.addFromSpan',
  },
});

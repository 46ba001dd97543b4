import type { omittedParts, spanKinds, spanStatuses } from '../traces/schemas';
import { Attributes, cutText } from './attributes';
import { firstStringProblem, hexId, parentId, spanTimes } from './checks';
import { contentText, readContent } from './content';
import { metadataEntries, metadataText } from './metadata';
import { resourceView } from './resource';
import type { OtlpSpanInput } from './types';

// One decoded OTLP span → the fields of our native span snapshot (API.md "OTLP trace ingestion",
// mapping table), or why the span is rejected. rootSpanId, revision and cost are the ingestion
// step's: they depend on the other spans of the trace and on the price catalog.

export type MappedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  kind: (typeof spanKinds)[number];
  status: Extract<(typeof spanStatuses)[number], 'success' | 'error'>;
  startedAt: number;
  endedAt: number;
  provider?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  sessionId?: string;
  endUserId?: string;
  promptVersionId?: string;
  /** JSON text of { input, output, system, error? }; absent when the span carries no content. */
  contentJson?: string;
  /** JSON object text; absent when nothing is left for it. */
  metadataJson?: string;
  omitted: (typeof omittedParts)[number][];
};

export type MappingResult = { ok: true; span: MappedSpan } | { ok: false; reason: string };

type Kind = MappedSpan['kind'];

const genAiOperations: Record<string, Kind> = {
  chat: 'model',
  text_completion: 'model',
  generate_content: 'model',
  execute_tool: 'tool',
  embeddings: 'retrieval',
  retrieval: 'retrieval',
  invoke_agent: 'execution',
  create_agent: 'execution',
  invoke_workflow: 'execution',
};
const openInferenceKinds: Record<string, Kind> = {
  LLM: 'model',
  TOOL: 'tool',
  RETRIEVER: 'retrieval',
  EMBEDDING: 'retrieval',
  RERANKER: 'retrieval',
  AGENT: 'execution',
  CHAIN: 'execution',
};
const lookup = (table: Record<string, Kind>, value: unknown) =>
  typeof value === 'string' && Object.hasOwn(table, value) ? table[value] : undefined;

function vercelKind(name: string): Kind | undefined {
  if (/^ai\.[^.]+\.(doGenerate|doStream)$/.test(name)) return 'model';
  if (name === 'ai.toolCall') return 'tool';
  return undefined;
}

function spanKind(attributes: Attributes, name: string, isRoot: boolean): Kind {
  const genAi = lookup(genAiOperations, attributes.read('gen_ai.operation.name'));
  const openInference = lookup(openInferenceKinds, attributes.read('openinference.span.kind'));
  return genAi ?? openInference ?? vercelKind(name) ?? (isRoot ? 'execution' : 'custom');
}

// Every candidate is read (so none of them reaches metadataJson), then the first one set wins.
function first<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((value) => value !== undefined);
}

export function mapOtlpSpan(input: OtlpSpanInput, now: number = Date.now()): MappingResult {
  const { span } = input;
  const traceId = hexId(span.traceId, 16, 'traceId');
  if ('reason' in traceId) return { ok: false, reason: traceId.reason };
  const spanId = hexId(span.spanId, 8, 'spanId');
  if ('reason' in spanId) return { ok: false, reason: spanId.reason };
  const parent = parentId(span.parentSpanId);
  if ('reason' in parent) return { ok: false, reason: parent.reason };
  // A span is never its own parent (the spec's span rules).
  if (parent.id === spanId.id) return { ok: false, reason: 'parentSpanId names the span itself' };
  const times = spanTimes(span.startTimeUnixNano, span.endTimeUnixNano, now);
  if ('reason' in times) return { ok: false, reason: times.reason };
  const resource = resourceView(input.resourceAttributes);
  if (resource.problem) return { ok: false, reason: `a string of the resource: ${resource.problem}` };
  const stringProblem = firstStringProblem(input);
  if (stringProblem) return { ok: false, reason: `a string of the span: ${stringProblem}` };

  const attributes = new Attributes(span.attributes);
  const name = typeof span.name === 'string' && span.name ? cutText(span.name, 200) : 'unknown_span';
  const mapped: MappedSpan = {
    traceId: traceId.id,
    spanId: spanId.id,
    name,
    service: resource.service,
    kind: spanKind(attributes, name, parent.id === undefined),
    status: span.status?.code === 2 ? 'error' : 'success',
    startedAt: times.startedAt,
    endedAt: times.endedAt,
    omitted: [],
  };
  if (parent.id !== undefined) mapped.parentSpanId = parent.id;
  const fields = {
    provider: first(
      attributes.text('gen_ai.provider.name', 100),
      attributes.text('gen_ai.system', 100),
      attributes.text('llm.provider', 100),
    ),
    model: first(
      attributes.text('gen_ai.response.model', 200),
      attributes.text('gen_ai.request.model', 200),
      attributes.text('llm.model_name', 200),
      attributes.text('ai.model.id', 200),
    ),
    inputTokens: first(
      attributes.count('gen_ai.usage.input_tokens'),
      attributes.count('gen_ai.usage.prompt_tokens'),
      attributes.count('llm.token_count.prompt'),
      attributes.count('ai.usage.promptTokens'),
      attributes.count('ai.usage.inputTokens'),
    ),
    outputTokens: first(
      attributes.count('gen_ai.usage.output_tokens'),
      attributes.count('gen_ai.usage.completion_tokens'),
      attributes.count('llm.token_count.completion'),
      attributes.count('ai.usage.completionTokens'),
      attributes.count('ai.usage.outputTokens'),
    ),
    sessionId: first(attributes.text('gen_ai.conversation.id', 200), attributes.text('session.id', 200)),
    endUserId: first(attributes.text('enduser.id', 200), attributes.text('user.id', 200)),
    promptVersionId: attributes.text('promptloop.prompt.version_id', 100),
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (mapped as Record<string, unknown>)[key] = value;
  }

  const omitted = new Set<string>();
  const contentJson = contentText(readContent(attributes, span.events ?? []), omitted);
  if (contentJson !== undefined) mapped.contentJson = contentJson;
  const statusMessage = typeof span.status?.message === 'string' ? span.status.message : undefined;
  const entries = metadataEntries(attributes, resource.entries, input.scopeName, span.kind, statusMessage);
  const metadataJson = metadataText(entries, omitted);
  if (metadataJson !== undefined) mapped.metadataJson = metadataJson;
  mapped.omitted = (['input', 'output', 'error', 'metadata'] as const).filter((part) => omitted.has(part));
  return { ok: true, span: mapped };
}

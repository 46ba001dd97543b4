import { and, eq } from 'drizzle-orm';
import { spans } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { authorize } from '../access/permissions';
import { authorizePromptRead } from '../access/organization';
import { caseRowSchema, type DatasetCaseResult, type ValidCaseRow } from '../datasets/schemas';
import {
  capacityOf,
  checkedContent,
  countOf,
  datasetOf,
  duplicateOf,
  insertCase,
  writeDataset,
} from '../datasets/service';
import { draftContentSchema } from '../prompts/schemas';
import { traceIdPattern } from '../traces/schemas';
import { versionOfOrganization } from '../traces/query';
import { caseFromSpanContent, spanContentOf, type Template } from './span-case';

// POST …/prompts/{prompt}/dataset/cases/from-span (API.md "From a span to a case"): a production
// model span's input and output as a dataset case, under exactly add case's rules (the same
// insertCase), keeping { traceId, spanId } as its source. Any span of the organization may feed any
// of its prompts (docs/decisions.md M11 "From a span to a case").

type SpanRow = Pick<typeof spans.$inferSelect, 'traceId' | 'spanId' | 'promptVersionId' | 'contentJson'>;
type Db = ServiceContext['db'];

// A span id as ingestion accepts it (server/traces/ingest-schema.ts).
const spanIdPattern = /^[0-9a-f]{16}$/;

// The organization's span; a malformed id, another organization's span and a missing one are all 404.
async function loadSpan(db: Db, organizationId: string, traceId: string, spanId: string): Promise<SpanRow> {
  if (!traceIdPattern.test(traceId) || !spanIdPattern.test(spanId)) throw notFound('Span');
  const [row] = await db
    .select({
      traceId: spans.traceId,
      spanId: spans.spanId,
      promptVersionId: spans.promptVersionId,
      contentJson: spans.contentJson,
    })
    .from(spans)
    .where(and(eq(spans.organizationId, organizationId), eq(spans.traceId, traceId), eq(spans.spanId, spanId)));
  if (!row) throw notFound('Span');
  return row;
}

type VersionRef = { promptId: string; promptName: string; version: number; content: unknown };

// The version a span names, when it is one of this organization's (its content rendered the span's messages).
const namedVersion = (db: Db, organizationId: string, versionId: string | null): Promise<VersionRef | null> =>
  versionId === null ? Promise.resolve(null) : versionOfOrganization(db, organizationId, versionId);

const templateSchema = draftContentSchema.pick({ messages: true, inputType: true });
const templateOf = (content: unknown): Template | null => {
  const parsed = templateSchema.safeParse(content);
  return parsed.success ? parsed.data : null;
};

/**
 * The row the span makes for the prompt: 409 invalid_state `no_content` without input and output
 * (an input alone is enough when the caller gives the expected output), `unusable_content` (with
 * `field`) when the span's input or output cannot be a case (too long).
 */
async function spanCaseRow(
  ctx: ServiceContext,
  promptId: string,
  span: SpanRow,
  version: VersionRef | null,
  expectedOutput: string | undefined,
): Promise<ValidCaseRow> {
  const content = spanContentOf(span.contentJson, expectedOutput !== undefined);
  if (!content)
    throw new AppError('invalid_state', 'This span carries no input and output to make a case from.', {
      state: 'no_content',
    });
  const prompt = templateOf(await checkedContent(ctx, promptId));
  const row = caseFromSpanContent(content, {
    template: (version && templateOf(version.content)) ?? prompt,
    inputType: prompt?.inputType ?? null,
    expectedOutput,
  });
  const checked = caseRowSchema.safeParse(row);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    const field = String(issue.path[0] ?? 'input');
    const part = field === 'input' ? 'input' : 'output';
    throw new AppError('invalid_state', `The span’s ${part} cannot be a case: ${issue.message}`, {
      state: 'unusable_content',
      field,
    });
  }
  return checked.data;
}

export async function addCaseFromSpan(
  ctx: ServiceContext,
  { organizationId, promptId, revision, traceId, spanId, expectedOutput }: OperationInput<'add_case_from_span'>,
): Promise<DatasetCaseResult> {
  return writeDataset(ctx, organizationId, promptId, revision, 'dataset.addCaseFromSpan', async (write) => {
    const span = await loadSpan(write.tx, organizationId, traceId, spanId);
    const version = await namedVersion(write.tx, organizationId, span.promptVersionId);
    const row = await spanCaseRow(write.ctx, write.dataset.promptId, span, version, expectedOutput);
    const source = { traceId: span.traceId, spanId: span.spanId };
    return { ...(await insertCase(write, row, source)), details: { source } };
  });
}

/** What the trace explorer's "Add to dataset" shows before adding (dashboard only). */
export type CaseFromSpanPreview = {
  /** The prompt of the version the span names; null when it names none of this organization's. */
  prompt: { id: string; name: string; version: number; archived: boolean } | null;
  dataset: { revision: number; count: number; capacity: number } | null;
  /** The case the span makes for that prompt, or why it cannot (no_content, unusable_content). */
  row: ValidCaseRow | null;
  problem: { state: string; message: string; field: string | null } | null;
  /** A case of the dataset with the same input and expected output, if any. */
  duplicateOf: string | null;
};

const isNoContent = (error: unknown) =>
  error instanceof AppError && (error.details as { state?: string } | undefined)?.state === 'no_content';

export async function previewCaseFromSpan(
  ctx: ServiceContext,
  { organizationId, traceId, spanId }: { organizationId: string; traceId: string; spanId: string },
): Promise<CaseFromSpanPreview> {
  await authorize(ctx, organizationId, 'traces.read');
  const span = await loadSpan(ctx.db, organizationId, traceId, spanId);
  const version = await namedVersion(ctx.db, organizationId, span.promptVersionId);
  if (!version) return { prompt: null, dataset: null, row: null, problem: null, duplicateOf: null };
  const { membership, prompt } = await authorizePromptRead(ctx, organizationId, version.promptId);
  const dataset = await datasetOf(ctx.db, prompt);
  const summary = {
    prompt: { id: prompt.id, name: prompt.name, version: version.version, archived: prompt.state === 'archived' },
    dataset: { revision: dataset.revision, count: await countOf(ctx.db, dataset.id), capacity: capacityOf(membership) },
  };
  try {
    const row = await spanCaseRow(ctx, prompt.id, span, version, undefined);
    return { ...summary, row, problem: null, duplicateOf: await duplicateOf(ctx.db, dataset.id, row) };
  } catch (error) {
    // An input without output: the case can still be made with an expected output typed in.
    const inputOnly = await spanCaseRow(ctx, prompt.id, span, version, '').catch(() => null);
    if (inputOnly && isNoContent(error))
      return {
        ...summary,
        row: inputOnly,
        problem: {
          state: 'no_output',
          message: 'This span has no output: type the expected output.',
          field: 'expectedOutput',
        },
        duplicateOf: null,
      };
    if (!(error instanceof AppError) || error.code !== 'invalid_state') throw error;
    const details = error.details as { state?: string; field?: string };
    return {
      ...summary,
      row: null,
      problem: { state: details.state ?? 'invalid_state', message: error.message, field: details.field ?? null },
      duplicateOf: null,
    };
  }
}

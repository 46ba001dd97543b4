import { and, asc, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { evalResults, evaluations } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { invalidRequest, notFound } from '../errors';
import { isId } from '../ids';
import { decodeCursor, encodeCursor, type Page } from '../paging';
import { idCursor } from '../id-cursor';
import { authorize } from '../access/permissions';
import { authorizePromptRead } from '../access/organization';
import { toEvaluation, toEvaluations, toResult, type EvaluationRow } from './serialize';
import type { Evaluation, EvaluationSide, Result } from './schemas';

// Reads an evaluation inside the organization; another organization's looks missing.
export async function loadEvaluation(
  ctx: ServiceContext,
  organizationId: string,
  evaluationId: string,
  options: { lock?: boolean } = {},
): Promise<EvaluationRow> {
  if (!isId('eval', evaluationId)) throw notFound('Evaluation');
  const query = ctx.db
    .select()
    .from(evaluations)
    .where(and(eq(evaluations.id, evaluationId), eq(evaluations.organizationId, organizationId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw notFound('Evaluation');
  return row;
}

export async function getEvaluation(
  ctx: ServiceContext,
  { organizationId, evaluationId }: OperationInput<'get_evaluation'>,
): Promise<Evaluation> {
  await authorize(ctx, organizationId, 'prompts.read');
  return toEvaluation(ctx, await loadEvaluation(ctx, organizationId, evaluationId));
}

// Newest first (ids sort by creation time).
export async function listEvaluations(
  ctx: ServiceContext,
  { organizationId, promptId, ...page }: OperationInput<'list_evaluations'>,
): Promise<Page<Evaluation>> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const conditions = [eq(evaluations.organizationId, organizationId), eq(evaluations.promptId, prompt.id)];
  if (page.cursor) conditions.push(lt(evaluations.id, idCursor(page.cursor, 'eval')));
  const rows = await ctx.db
    .select()
    .from(evaluations)
    .where(and(...conditions))
    .orderBy(desc(evaluations.id))
    .limit(page.limit + 1);
  const pageRows = rows.slice(0, page.limit);
  return {
    items: await toEvaluations(ctx, pageRows),
    nextCursor: rows.length > page.limit ? encodeCursor([pageRows[pageRows.length - 1].id]) : null,
  };
}

/**
 * Results by case position; for a comparison without `side`, both sides of each case in turn
 * (candidate, then production). Keyset cursor on (position, side).
 */
export async function listResults(
  ctx: ServiceContext,
  { organizationId, evaluationId, ...query }: OperationInput<'list_evaluation_results'>,
): Promise<Page<Result>> {
  await authorize(ctx, organizationId, 'prompts.read');
  const evaluation = await loadEvaluation(ctx, organizationId, evaluationId);
  const runs: [EvaluationSide, string][] = [['candidate', evaluation.candidateRunId]];
  if (evaluation.productionRunId) runs.push(['production', evaluation.productionRunId]);
  const wanted = query.side ? runs.filter(([side]) => side === query.side) : runs;
  if (!wanted.length) return { items: [], nextCursor: null };

  const side = sql<EvaluationSide>`(case when ${evalResults.runId} = ${evaluation.candidateRunId} then 'candidate' else 'production' end)`;
  const conditions: SQL[] = [
    eq(evalResults.organizationId, organizationId),
    inArray(
      evalResults.runId,
      wanted.map(([, runId]) => runId),
    ),
  ];
  if (query.cursor) {
    const [position, lastSide] = decodeCursor(query.cursor, 2);
    if (!Number.isInteger(position) || (lastSide !== 'candidate' && lastSide !== 'production'))
      throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
    conditions.push(sql`(${evalResults.position}, ${side}) > (${Number(position)}, ${String(lastSide)})`);
  }
  const rows = await ctx.db
    .select({ result: evalResults, side })
    .from(evalResults)
    .where(and(...conditions))
    .orderBy(asc(evalResults.position), asc(side))
    .limit(query.limit + 1);
  const pageRows = rows.slice(0, query.limit);
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map((r) => toResult(r.result, r.side)),
    nextCursor: rows.length > query.limit ? encodeCursor([last.result.position, last.side]) : null,
  };
}

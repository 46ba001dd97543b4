import { and, desc, eq, gte, lte, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { onlineEvalConfigs, onlineScoreDaily, promptVersions } from '@/db/schema';
import type { ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { invalidRequest, notFound } from '../errors';
import { isId } from '../ids';
import { roundScore } from '../numbers';
import { recordAudit } from '../audit/service';
import { authorizePromptRead, authorizePromptWrite, type PromptRow } from '../access/organization';
import { resolveScoringPolicy } from '../prompts/scoring';
import { configuredRoutes, localRouteId, requireJudgeRoute } from '../models/routes';
import { resolveWarning } from '../warnings/service';
import type { OnlineEvaluation, onlineScoreDaySchema, onlineScoresSchema } from './schemas';

// GET/PUT …/online-evaluation and GET …/online-scores (API.md "Online evaluation (production
// traces)"). The worker that samples and scores spans is in scanner.ts, scorer.ts and worker.ts.

type ConfigRow = typeof onlineEvalConfigs.$inferSelect;

const defaultSampleRate = 0.1;
const dayMs = 24 * 60 * 60 * 1000;
// GET …/online-scores answers at most this many (version, day) rows: the newest ones of the window.
const maxScoreRows = 10_000;

// The first available route that can grade: the list's order (local routes first, then the
// configured providers), without the local echo, which repeats its input and never answers a verdict.
function firstJudgeRoute(): string | null {
  return configuredRoutes().find((route) => route.available && route.id !== localRouteId)?.id ?? null;
}

// What an omitted judgeModelRouteId / rubric becomes: the prompt's judge scoring policy, else the
// first route that can grade and no rubric.
function defaultsFor(prompt: PromptRow): { judgeModelRouteId: string | null; rubric: string | null } {
  const policy = resolveScoringPolicy(prompt.scoring);
  if (policy.method === 'judge') return { judgeModelRouteId: policy.judgeModelRouteId!, rubric: policy.rubric! };
  return { judgeModelRouteId: firstJudgeRoute(), rubric: null };
}

function toView(row: ConfigRow): OnlineEvaluation {
  return {
    enabled: row.enabled,
    sampleRate: row.sampleRate,
    judgeModelRouteId: row.judgeModelRouteId,
    // A configuration saved disabled without a rubric stores it empty.
    rubric: row.rubric === '' ? null : row.rubric,
    paused: row.pausedAt !== null,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
  };
}

// `lock`: a PUT holds the row against the scorer pausing it meanwhile.
async function loadConfig(ctx: ServiceContext, promptId: string, lock = false): Promise<ConfigRow | undefined> {
  const query = ctx.db.select().from(onlineEvalConfigs).where(eq(onlineEvalConfigs.promptId, promptId));
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

export async function getOnlineEvaluation(
  ctx: ServiceContext,
  { organizationId, promptId }: OperationInput<'get_online_evaluation'>,
): Promise<OnlineEvaluation> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  const row = await loadConfig(ctx, prompt.id);
  if (row) return toView(row);
  // Never saved: off, with the defaults a PUT would use.
  return {
    enabled: false,
    sampleRate: defaultSampleRate,
    ...defaultsFor(prompt),
    paused: false,
    updatedAt: null,
    updatedBy: null,
  };
}

/**
 * Replaces the configuration (editors and admins; not on an archived prompt; a prompt in setup may
 * be configured, its spans start counting once it has versions). Enabling starts the window of
 * eligible spans now (enabledAt): spans received while disabled are never scored. The route must
 * exist and be available; a rubric is needed to enable (turning scoring off always works).
 * Disabling also ends a pause for credits and resolves its warning.
 */
export async function setOnlineEvaluation(
  ctx: ServiceContext,
  { organizationId, promptId, ...input }: OperationInput<'set_online_evaluation'>,
): Promise<OnlineEvaluation> {
  const { prompt } = await authorizePromptWrite(ctx, organizationId, promptId, { lock: true });
  const defaults = defaultsFor(prompt);
  const judgeModelRouteId = input.judgeModelRouteId ?? defaults.judgeModelRouteId;
  if (judgeModelRouteId === null)
    throw invalidRequest('No model route is available to judge with.', [
      { path: 'judgeModelRouteId', message: 'No available route; name one.' },
    ]);
  const route = requireJudgeRoute(judgeModelRouteId);
  if (!route.available)
    throw invalidRequest(`The model route "${route.id}" has no credentials configured on this server.`, [
      { path: 'judgeModelRouteId', message: 'The route is not available.' },
    ]);
  const rubric = input.rubric ?? defaults.rubric;
  if (rubric === null && input.enabled)
    throw invalidRequest('No rubric: give one, or set a judge scoring policy on the prompt.', [
      { path: 'rubric', message: 'Write a rubric: this prompt’s scoring policy has none to use instead.' },
    ]);
  const sampleRate = input.sampleRate ?? defaultSampleRate;

  const before = await loadConfig(ctx, prompt.id, true);
  // The database's clock, the one that stamps spans' received_at.
  const now = sql`now()`;
  const values = {
    organizationId,
    enabled: input.enabled,
    sampleRate,
    judgeModelRouteId: route.id,
    rubric: rubric ?? '',
    // Enabling opens the window of eligible spans; staying enabled keeps it.
    enabledAt: input.enabled ? (before?.enabled && before.enabledAt ? before.enabledAt : now) : null,
    pausedAt: input.enabled ? (before?.pausedAt ?? null) : null,
    updatedBy: ctx.actor.userId,
    updatedAt: now,
  };
  const [row] = await ctx.db
    .insert(onlineEvalConfigs)
    .values({ promptId: prompt.id, ...values })
    .onConflictDoUpdate({ target: onlineEvalConfigs.promptId, set: values })
    .returning();
  if (before?.pausedAt && !input.enabled)
    await resolveWarning(ctx.db, { organizationId, kind: 'online_evaluation_paused', subjectId: prompt.id });
  // Turning it off, or naming another judge, is the answer to a judge that failed.
  if (before && (!input.enabled || before.judgeModelRouteId !== route.id))
    await resolveWarning(ctx.db, { organizationId, kind: 'online_evaluation_failing', subjectId: prompt.id });
  const view = toView(row);
  await recordAudit(ctx, {
    organizationId,
    operation: 'online_evaluation.update',
    targetType: 'prompt',
    targetId: prompt.id,
    details: {
      from: before ? { ...toView(before), updatedAt: undefined, updatedBy: undefined } : null,
      to: { enabled: view.enabled, sampleRate, judgeModelRouteId: route.id, rubric: view.rubric },
    },
  });
  return view;
}

// Past year 9999 an ISO string gains a sign and six year digits; every stored day is before that.
const lastDay = Date.UTC(9999, 11, 31);
const dayOf = (ms: number) => new Date(Math.min(ms, lastDay)).toISOString().slice(0, 10);

/**
 * Daily figures per version from online_score_daily, for the UTC days (of the spans' start) that
 * overlap [from, to] (default the last 30 days), oldest day first, versions in number order. A
 * versionId that is not a version of this prompt is 404.
 */
export async function listOnlineScores(
  ctx: ServiceContext,
  { organizationId, promptId, from, to, versionId }: OperationInput<'list_online_scores'>,
): Promise<z.infer<typeof onlineScoresSchema>> {
  const { prompt } = await authorizePromptRead(ctx, organizationId, promptId);
  if (versionId !== undefined) {
    const [version] = isId('ver', versionId)
      ? await ctx.db
          .select({ id: promptVersions.id })
          .from(promptVersions)
          .where(and(eq(promptVersions.id, versionId), eq(promptVersions.promptId, prompt.id)))
      : [];
    if (!version) throw notFound('Version');
  }
  const end = to ?? Date.now();
  const start = from ?? end - 30 * dayMs;
  const d = onlineScoreDaily;
  const where = [eq(d.promptId, prompt.id), gte(d.day, dayOf(start)), lte(d.day, dayOf(end))];
  if (versionId !== undefined) where.push(eq(d.versionId, versionId));
  const rows = await ctx.db
    .select({
      versionId: d.versionId,
      version: promptVersions.number,
      day: d.day,
      sampled: d.sampled,
      scored: d.scored,
      passed: d.passed,
      scoreSum: d.scoreSum,
      skippedNoContent: d.skippedNoContent,
    })
    .from(d)
    .innerJoin(promptVersions, eq(promptVersions.id, d.versionId))
    .where(and(...where))
    .orderBy(desc(d.day), desc(promptVersions.number))
    .limit(maxScoreRows);
  rows.reverse();
  return {
    items: rows.map((r): z.infer<typeof onlineScoreDaySchema> => ({
      versionId: r.versionId,
      version: r.version,
      day: r.day,
      sampled: r.sampled,
      scored: r.scored,
      passed: r.passed,
      meanScore: r.scored > 0 ? roundScore(r.scoreSum / r.scored) : null,
      skippedNoContent: r.skippedNoContent,
    })),
  };
}

import { z } from 'zod';
import { estimateEvaluation, startEvaluation } from '@/server/evals/start';
import { initializeBaseline } from '@/server/evals/initialize';
import { reviewResults } from '@/server/evals/review';
import { getEvaluation, listEvaluations, listResults } from '@/server/evals/queries';
import { cancelEvaluation, resumeEvaluation, retryEvaluationSide } from '@/server/evals/service';
import { initializeInput, listResultsQuery, retryInput, reviewInput, startEvaluationInput } from '@/server/evals/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, infiniteDirection, orgIdInput, toPageQuery } from './paging';
import { promptIdInput } from './prompts';

const evaluationIdInput = orgIdInput.extend({ evaluationId: z.string().min(1) });

// The dashboard's evaluation operations: the same service functions as the REST routes.
export const evalsRouter = router({
  list: protectedProcedure
    .input(dashboardPage.extend(promptIdInput.shape))
    .query(({ ctx, input }) => listEvaluations(ctx, input.organizationId, input.promptId, toPageQuery(input))),
  get: protectedProcedure.input(evaluationIdInput).query(({ ctx, input }) => getEvaluation(ctx, input.organizationId, input.evaluationId)),
  estimate: protectedProcedure
    .input(startEvaluationInput.extend(promptIdInput.shape))
    .query(({ ctx, input }) => estimateEvaluation(ctx, input.organizationId, input.promptId, { versionId: input.versionId, scope: input.scope, rerunBoth: input.rerunBoth })),
  start: protectedProcedure
    .input(startEvaluationInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => startEvaluation(ctx, input.organizationId, input.promptId, { versionId: input.versionId, scope: input.scope, rerunBoth: input.rerunBoth })),
  initialize: protectedProcedure
    .input(initializeInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => initializeBaseline(ctx, input.organizationId, input.promptId, { draftRevision: input.draftRevision, scoringMethod: input.scoringMethod })),
  results: protectedProcedure
    .input(listResultsQuery.extend({ ...evaluationIdInput.shape, ...infiniteDirection }))
    .query(({ ctx, input }) => listResults(ctx, input.organizationId, input.evaluationId, { cursor: input.cursor, limit: input.limit, side: input.side })),
  cancel: protectedProcedure.input(evaluationIdInput).mutation(({ ctx, input }) => cancelEvaluation(ctx, input.organizationId, input.evaluationId)),
  resume: protectedProcedure.input(evaluationIdInput).mutation(({ ctx, input }) => resumeEvaluation(ctx, input.organizationId, input.evaluationId)),
  retry: protectedProcedure
    .input(retryInput.extend(evaluationIdInput.shape))
    .mutation(({ ctx, input }) => retryEvaluationSide(ctx, input.organizationId, input.evaluationId, input.side)),
  review: protectedProcedure
    .input(reviewInput.safeExtend(evaluationIdInput.shape))
    .mutation(({ ctx, input }) => reviewResults(ctx, input.organizationId, input.evaluationId, { reviews: input.reviews })),
});

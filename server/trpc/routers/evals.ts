import { z } from 'zod';
import { estimateEvaluation, startEvaluation } from '@/server/evals/start';
import { initializeBaseline } from '@/server/evals/initialize';
import { reviewResults } from '@/server/evals/review';
import { getEvaluation, listEvaluations, listResults } from '@/server/evals/queries';
import { cancelEvaluation, resumeEvaluation, retryEvaluationSide } from '@/server/evals/service';
import { initializeInput, listResultsQuery, retryInput, reviewInput, startEvaluationInput } from '@/server/evals/schemas';
import { protectedProcedure, router } from '../init';
import { dashboardPage, infiniteDirection, orgIdInput, withoutDirection } from './paging';
import { promptIdInput } from './prompts';

const evaluationIdInput = orgIdInput.extend({ evaluationId: z.string().min(1) });

// The dashboard's evaluation operations: the same service functions as the REST routes.
export const evalsRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(promptIdInput.shape)).query(({ ctx, input }) => listEvaluations(ctx, withoutDirection(input))),
  get: protectedProcedure.input(evaluationIdInput).query(({ ctx, input }) => getEvaluation(ctx, withoutDirection(input))),
  estimate: protectedProcedure.input(startEvaluationInput.extend(promptIdInput.shape)).query(({ ctx, input }) => estimateEvaluation(ctx, withoutDirection(input))),
  start: protectedProcedure.input(startEvaluationInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => startEvaluation(ctx, withoutDirection(input))),
  initialize: protectedProcedure.input(initializeInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => initializeBaseline(ctx, withoutDirection(input))),
  results: protectedProcedure
    .input(listResultsQuery.extend({ ...evaluationIdInput.shape, ...infiniteDirection }))
    .query(({ ctx, input }) => listResults(ctx, withoutDirection(input))),
  cancel: protectedProcedure.input(evaluationIdInput).mutation(({ ctx, input }) => cancelEvaluation(ctx, withoutDirection(input))),
  resume: protectedProcedure.input(evaluationIdInput).mutation(({ ctx, input }) => resumeEvaluation(ctx, withoutDirection(input))),
  retry: protectedProcedure.input(retryInput.extend(evaluationIdInput.shape)).mutation(({ ctx, input }) => retryEvaluationSide(ctx, withoutDirection(input))),
  review: protectedProcedure.input(reviewInput.safeExtend(evaluationIdInput.shape)).mutation(({ ctx, input }) => reviewResults(ctx, withoutDirection(input))),
});

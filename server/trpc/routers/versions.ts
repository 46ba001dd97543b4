import { z } from 'zod';
import { getVersion, listVersions, saveVersion } from '@/server/prompts/versions';
import { listLabelHistory, listLabels, moveLabel, removeLabel } from '@/server/prompts/labels';
import { getScoringPolicy, setScoringPolicy } from '@/server/prompts/scoring';
import { labelHistoryQuery, labelName, moveLabelInput, saveVersionInput, setScoringInput } from '@/server/prompts/schemas';
import { storedInt } from '@/server/numbers';
import { protectedProcedure, router } from '../init';
import { dashboardPage, infiniteDirection, withoutDirection } from './paging';
import { promptIdInput } from './prompts';

const labelInput = promptIdInput.extend({ label: labelName });

// Versions, labels, label history and the scoring policy of one prompt (the same services as REST).
export const versionsRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(promptIdInput.shape)).query(({ ctx, input }) => listVersions(ctx, withoutDirection(input))),
  get: protectedProcedure.input(promptIdInput.extend({ number: storedInt(1) })).query(({ ctx, input }) => getVersion(ctx, withoutDirection(input))),
  save: protectedProcedure.input(saveVersionInput.extend(promptIdInput.shape)).mutation(({ ctx, input }) => saveVersion(ctx, withoutDirection(input))),
  labels: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => listLabels(ctx, withoutDirection(input))),
  moveLabel: protectedProcedure.input(moveLabelInput.extend(labelInput.shape)).mutation(({ ctx, input }) => moveLabel(ctx, withoutDirection(input))),
  removeLabel: protectedProcedure.input(labelInput).mutation(async ({ ctx, input }) => {
    await removeLabel(ctx, withoutDirection(input));
    return null;
  }),
  history: protectedProcedure
    .input(labelHistoryQuery.extend({ ...promptIdInput.shape, ...infiniteDirection }))
    .query(({ ctx, input }) => listLabelHistory(ctx, withoutDirection(input))),
  getScoring: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getScoringPolicy(ctx, withoutDirection(input))),
  setScoring: protectedProcedure.input(setScoringInput.safeExtend(promptIdInput.shape)).mutation(({ ctx, input }) => setScoringPolicy(ctx, withoutDirection(input))),
});

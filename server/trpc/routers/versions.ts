import { getVersion, listVersions, saveVersion } from '@/server/prompts/versions';
import { listLabelHistory, listLabels, moveLabel, removeLabel } from '@/server/prompts/labels';
import { getScoringPolicy, setScoringPolicy } from '@/server/prompts/scoring';
import { labelHistoryQuery, labelName, moveLabelInput, saveVersionInput, setScoringInput } from '@/server/prompts/schemas';
import { storedInt } from '@/server/numbers';
import { protectedProcedure, router } from '../init';
import { dashboardPage, infiniteDirection, toPageQuery } from './paging';
import { promptIdInput } from './prompts';

const labelInput = promptIdInput.extend({ label: labelName });

// Versions, labels, label history and the scoring policy of one prompt (the same services as REST).
export const versionsRouter = router({
  list: protectedProcedure.input(dashboardPage.extend(promptIdInput.shape)).query(({ ctx, input }) => listVersions(ctx, input.organizationId, input.promptId, toPageQuery(input))),
  get: protectedProcedure.input(promptIdInput.extend({ number: storedInt(1) })).query(({ ctx, input }) => getVersion(ctx, input.organizationId, input.promptId, input.number)),
  save: protectedProcedure
    .input(saveVersionInput.extend(promptIdInput.shape))
    .mutation(({ ctx, input }) => saveVersion(ctx, input.organizationId, input.promptId, { draftRevision: input.draftRevision })),
  labels: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => listLabels(ctx, input.organizationId, input.promptId)),
  moveLabel: protectedProcedure
    .input(moveLabelInput.extend(labelInput.shape))
    .mutation(({ ctx, input }) => moveLabel(ctx, input.organizationId, input.promptId, input.label, { versionId: input.versionId, evaluationId: input.evaluationId })),
  removeLabel: protectedProcedure.input(labelInput).mutation(async ({ ctx, input }) => {
    await removeLabel(ctx, input.organizationId, input.promptId, input.label);
    return null;
  }),
  history: protectedProcedure
    .input(labelHistoryQuery.extend({ ...promptIdInput.shape, ...infiniteDirection }))
    .query(({ ctx, input }) => listLabelHistory(ctx, input.organizationId, input.promptId, { label: input.label, cursor: input.cursor, limit: input.limit })),
  getScoring: protectedProcedure.input(promptIdInput).query(({ ctx, input }) => getScoringPolicy(ctx, input.organizationId, input.promptId)),
  setScoring: protectedProcedure
    .input(setScoringInput.safeExtend(promptIdInput.shape))
    .mutation(({ ctx, input }) =>
      setScoringPolicy(ctx, input.organizationId, input.promptId, { method: input.method, judgeModelRouteId: input.judgeModelRouteId, rubric: input.rubric }),
    ),
});

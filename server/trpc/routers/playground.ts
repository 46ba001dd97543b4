import { draftContentInput } from '@/server/prompts/schemas';
import { playgroundRunInput } from '@/server/models/schemas';
import { startPlaygroundRun } from '@/server/prompts/playground';
import { isAppError } from '@/server/errors';
import { protectedProcedure, router, toTrpcError } from '../init';
import { promptIdInput } from './paging';

// Errors raised while streaming bypass the middleware; give them the same tRPC code it would.
async function* withAppErrors<T>(events: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (error) {
    if (isAppError(error)) throw toTrpcError(error);
    throw error;
  }
}

export const playgroundRouter = router({
  // Streamed: a transaction would end before the stream does, and a run writes nothing.
  run: protectedProcedure
    .meta({ transaction: false })
    .input(playgroundRunInput.extend({ ...promptIdInput.shape, content: draftContentInput }))
    .mutation(async ({ ctx, input }) => {
      const events = await startPlaygroundRun(ctx, input.organizationId, input.promptId, {
        content: input.content,
        input: input.input,
        variables: input.variables,
      });
      return withAppErrors(events);
    }),
});

import type { ServiceContext } from '../context';
import { getDb } from '@/db/client';
import { enforceLimit, limitKeys, limits } from '../credentials/attempts';
import { authorizeOrganizationWrite, loadPrompt } from '../access/organization';
import { resolveContent } from './drafts';
import type { ParsedDraftContent } from './schemas';
import { chatRequest, renderMessages, type RenderInput } from '../models/render';
import { stream } from '../models/provider';
import type { RunEvent } from '../models/schemas';

export type PlaygroundRunInput = RenderInput & { content: ParsedDraftContent };

// Checks everything before the first byte goes to a provider, then streams. A run changes no
// stored state, so it is not audited; it spends the organization's model budget, so a read-only
// organization (deletion scheduled) refuses it, and each user has a rate (counted on the root
// handle, so every process agrees and a refusal stays counted).
export async function startPlaygroundRun(
  ctx: ServiceContext,
  organizationId: string,
  promptId: string,
  input: PlaygroundRunInput,
): Promise<AsyncGenerator<RunEvent>> {
  await authorizeOrganizationWrite(ctx, organizationId, 'playground.run');
  await loadPrompt(ctx, organizationId, promptId);
  await enforceLimit(await getDb(), limitKeys.playgroundUser(ctx.actor.userId), limits.playgroundRunsPerUser);
  const { content, route } = resolveContent(input.content);
  const messages = renderMessages(content, { input: input.input, variables: input.variables });
  const events = stream(route, chatRequest(content, messages));
  return (async function* () {
    for await (const event of events) {
      if (event.type === 'delta') yield event;
      else
        yield {
          type: 'done',
          output: event.output,
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          latencyMs: event.latencyMs,
          costUsdNanos: event.costUsdNanos,
          finishReason: event.finishReason,
        };
    }
  })();
}

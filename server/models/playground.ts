import type { ServiceContext } from '../context';
import { authorize } from '../auth/permissions';
import { loadPrompt } from '../prompts/access';
import { resolveContent } from '../prompts/drafts';
import type { ParsedDraftContent } from '../prompts/schemas';
import { renderMessages, type RenderInput } from './render';
import { stream } from './provider';
import type { RunEvent } from './schemas';

export type PlaygroundRunInput = RenderInput & { content: ParsedDraftContent };

// Checks everything before the first byte goes to a provider, then streams. A run changes no
// stored state, so it is not audited.
export async function startPlaygroundRun(ctx: ServiceContext, organizationId: string, promptId: string, input: PlaygroundRunInput): Promise<AsyncGenerator<RunEvent>> {
  await authorize(ctx, organizationId, 'playground.run');
  await loadPrompt(ctx, organizationId, promptId);
  const { content, route } = resolveContent(input.content);
  const messages = renderMessages(content, { input: input.input, variables: input.variables });
  const events = stream(route, { messages, temperature: content.temperature });
  return (async function* () {
    for await (const event of events) {
      if (event.type === 'delta') yield event;
      else yield { type: 'done', output: event.output, inputTokens: event.inputTokens, outputTokens: event.outputTokens, latencyMs: event.latencyMs, costUsdNanos: event.costUsdNanos, finishReason: event.finishReason };
    }
  })();
}

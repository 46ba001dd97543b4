'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import { useTRPCClient } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { DraftContent } from '@/components/prompts/types';

type RunDone = {
  type: 'done';
  output: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  costUsdNanos: number;
  finishReason: string;
};
type RunEvent = { type: 'delta'; text: string } | RunDone;

export type RunState =
  | { phase: 'idle' }
  | { phase: 'running'; output: string }
  | { phase: 'done'; output: string; result: RunDone }
  | { phase: 'stopped'; output: string }
  | { phase: 'failed'; output: string; message: string; code: string };

type RunInput = {
  organizationId: string;
  promptId: string;
  content: DraftContent;
  input?: string;
  variables?: Record<string, string>;
};

// One streamed playground run at a time: deltas append as they arrive; Stop aborts the request.
export function usePlaygroundRun() {
  const client = useTRPCClient();
  const [state, setState] = useState<RunState>({ phase: 'idle' });
  const controller = useRef<AbortController | null>(null);

  useEffect(() => () => controller.current?.abort(), []);

  const run = useCallback(
    async (input: RunInput) => {
      controller.current?.abort();
      const abort = new AbortController();
      controller.current = abort;
      let output = '';
      setState({ phase: 'running', output });
      try {
        const stream = (await client.playground.run.mutate(input, { signal: abort.signal })) as AsyncIterable<RunEvent>;
        for await (const event of stream) {
          if (abort.signal.aborted) break;
          if (event.type === 'delta') {
            output += event.text;
            setState({ phase: 'running', output });
          } else if (event.type === 'done') {
            setState({ phase: 'done', output: event.output ?? output, result: event });
          }
        }
        if (abort.signal.aborted) setState({ phase: 'stopped', output });
        else setState((current) => (current.phase === 'running' ? { phase: 'stopped', output } : current));
      } catch (error) {
        if (abort.signal.aborted) {
          setState({ phase: 'stopped', output });
          return;
        }
        const info = readAppError(error);
        setState({
          phase: 'failed',
          output,
          message: info?.message ?? 'The run failed.',
          code: info?.code ?? 'internal',
        });
      } finally {
        if (controller.current === abort) controller.current = null;
      }
    },
    [client],
  );

  const stop = useCallback(() => controller.current?.abort(), []);
  return { state, run, stop };
}

'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import type { Prompt } from '@/components/prompts/types';
import { useTRPC } from '@/lib/trpc/client';
import { curlSnippet, typescriptSnippet } from './snippets';

// curl and SDK examples with this prompt's id, and the new secret when there is one.
export function RetrievalSnippets({
  organizationId,
  prompt,
  secret,
}: {
  organizationId: string;
  prompt: Prompt;
  secret: string | null;
}) {
  const trpc = useTRPC();
  const production = prompt.labels.find((label) => label.label === 'production');
  // The production version's content tells which variables compile() needs.
  const version = useQuery({
    ...trpc.versions.get.queryOptions({ organizationId, promptId: prompt.id, number: production?.version ?? 1 }),
    enabled: Boolean(production),
  });
  const content = version.data?.content ?? null;
  const snippets = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    return [
      {
        id: 'curl',
        tab: 'curl',
        label: 'curl example',
        copyLabel: 'Copy command',
        code: curlSnippet(origin, prompt.id, secret, prompt.labels),
      },
      {
        id: 'typescript',
        tab: 'TypeScript',
        label: 'TypeScript example',
        copyLabel: 'Copy code',
        code: typescriptSnippet(origin, prompt.id, secret, content),
      },
    ];
  }, [prompt.id, prompt.labels, secret, content]);
  return <SnippetTabs title="Retrieve this prompt" snippets={snippets} />;
}

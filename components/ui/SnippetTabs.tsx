'use client';

import { useState } from 'react';
import { CopyButton } from './CopyButton';

export type Snippet = { id: string; tab: string; label: string; copyLabel: string; code: string };

// Ready-to-paste examples in tabs, each with its own copy button.
export function SnippetTabs({ title, snippets }: { title: string; snippets: Snippet[] }) {
  const [selected, setSelected] = useState(snippets[0]?.id);
  const current = snippets.find((s) => s.id === selected) ?? snippets[0];
  if (!current) return null;
  return (
    <div>
      <div className="snippet-bar">
        <div className="snippet-tabs" role="tablist" aria-label={title}>
          {snippets.map((snippet) => (
            <button
              key={snippet.id}
              type="button"
              role="tab"
              className="snippet-tab"
              aria-selected={snippet.id === current.id}
              onClick={() => setSelected(snippet.id)}
            >
              {snippet.tab}
            </button>
          ))}
        </div>
        <CopyButton value={current.code} label={current.copyLabel} />
      </div>
      <div className="snippet" role="tabpanel" aria-label={current.label}>
        <pre>
          <code>{current.code}</code>
        </pre>
      </div>
    </div>
  );
}

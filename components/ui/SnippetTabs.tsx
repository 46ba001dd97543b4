'use client';

import { useId, useRef, useState, type KeyboardEvent } from 'react';
import { CopyButton } from './CopyButton';

export type Snippet = { id: string; tab: string; label: string; copyLabel: string; code: string };

// Ready-to-paste examples in tabs, each with its own copy button. The WAI-ARIA tabs pattern: one tab stop for
// the tab list, arrow keys (and Home/End) move and select, Tab goes on into the panel.
export function SnippetTabs({ title, snippets }: { title: string; snippets: Snippet[] }) {
  const [selected, setSelected] = useState(snippets[0]?.id);
  const baseId = useId();
  const tabRefs = useRef<(HTMLButtonElement | null)[]>([]);
  const current = snippets.find((s) => s.id === selected) ?? snippets[0];
  if (!current) return null;
  const currentIndex = snippets.indexOf(current);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const last = snippets.length - 1;
    const target =
      event.key === 'ArrowRight'
        ? currentIndex === last
          ? 0
          : currentIndex + 1
        : event.key === 'ArrowLeft'
          ? currentIndex === 0
            ? last
            : currentIndex - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : undefined;
    if (target === undefined) return;
    event.preventDefault();
    setSelected(snippets[target].id);
    tabRefs.current[target]?.focus();
  };

  const tabId = (index: number) => `${baseId}-tab-${index}`;
  const panelId = `${baseId}-panel`;
  return (
    <div>
      <div className="snippet-bar">
        <div className="snippet-tabs" role="tablist" aria-label={title} onKeyDown={onKeyDown}>
          {snippets.map((snippet, index) => (
            <button
              key={snippet.id}
              ref={(element) => {
                tabRefs.current[index] = element;
              }}
              id={tabId(index)}
              type="button"
              role="tab"
              className="snippet-tab"
              aria-selected={index === currentIndex}
              aria-controls={panelId}
              tabIndex={index === currentIndex ? 0 : -1}
              onClick={() => setSelected(snippet.id)}
            >
              {snippet.tab}
            </button>
          ))}
        </div>
        <CopyButton value={current.code} label={current.copyLabel} />
      </div>
      <div className="snippet" role="tabpanel" id={panelId} aria-labelledby={tabId(currentIndex)}>
        {/* A long line scrolls sideways: the block is a named tab stop so the keyboard can scroll it too. */}
        <pre tabIndex={0} role="region" aria-label={current.label}>
          <code>{current.code}</code>
        </pre>
      </div>
    </div>
  );
}

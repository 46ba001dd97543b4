'use client';

import { useMemo, useState } from 'react';
import type { Span } from '@/server/traces/schemas';
import { AttributeTable } from './AttributeTable';
import { attributeGroups } from './attributes';
import { readChatContent } from './chat';
import { ChatTranscript } from './ChatTranscript';
import { JsonBlock } from './JsonBlock';

function parsed(text: string | null): { ok: true; value: unknown } | { ok: false } {
  if (text === null) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

// Two buttons switching a section between its readable view and the JSON as stored.
function ViewToggle<V extends string>({
  label,
  views,
  view,
  onChange,
}: {
  label: string;
  views: [V, string][];
  view: V;
  onChange: (view: V) => void;
}) {
  return (
    <div className="view-toggle" role="group" aria-label={label}>
      {views.map(([value, text]) => (
        <button key={value} type="button" aria-pressed={view === value} onClick={() => onChange(value)}>
          {text}
        </button>
      ))}
    </div>
  );
}

const partNames = { input: 'Input', output: 'Output', error: 'Error' } as const;

// Why a part is missing: cut at ingestion for being too large, or left out by the application.
function OmittedNotice({ omitted }: { omitted: Span['omitted'] }) {
  const parts = (['input', 'output', 'error'] as const).filter((part) => omitted.includes(part));
  if (!parts.length) return null;
  const names = parts.map((part) => partNames[part]);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names[0];
  return (
    <p className="span-omitted" role="note">
      <strong>{list} omitted.</strong> Left out by the application, or cut at ingestion because it was too large to
      store.
    </p>
  );
}

export function SpanContentSection({ span }: { span: Span }) {
  const chat = useMemo(() => {
    const content = parsed(span.contentJson);
    return content.ok ? readChatContent(content.value) : null;
  }, [span.contentJson]);
  const [view, setView] = useState<'chat' | 'json'>('chat');
  return (
    <section className="span-panel-section" aria-label="Content">
      <div className="span-panel-section-head">
        <h3>Content</h3>
        {chat ? (
          <ViewToggle
            label="Content view"
            views={[
              ['chat', 'Chat'],
              ['json', 'Raw JSON'],
            ]}
            view={view}
            onChange={setView}
          />
        ) : null}
      </div>
      <OmittedNotice omitted={span.omitted} />
      {span.contentJson === null ? (
        <p className="muted">{span.omitted.length ? 'No content stored.' : 'No content recorded.'}</p>
      ) : chat && view === 'chat' ? (
        <ChatTranscript content={chat} />
      ) : (
        <JsonBlock value={span.contentJson} label="Content JSON" />
      )}
    </section>
  );
}

export function SpanAttributesSection({ span }: { span: Span }) {
  const metadata = useMemo(() => parsed(span.metadataJson), [span.metadataJson]);
  const table = metadata.ok && attributeGroups(metadata.value) !== null;
  const [view, setView] = useState<'table' | 'json'>('table');
  return (
    <section className="span-panel-section" aria-label="Attributes">
      <div className="span-panel-section-head">
        <h3>Attributes</h3>
        {table ? (
          <ViewToggle
            label="Attributes view"
            views={[
              ['table', 'Table'],
              ['json', 'Raw JSON'],
            ]}
            view={view}
            onChange={setView}
          />
        ) : null}
      </div>
      {span.omitted.includes('metadata') ? (
        <p className="span-omitted" role="note">
          <strong>Some attributes omitted.</strong> Left out by the application, or past the limit of 64 keys and 16
          KiB.
        </p>
      ) : null}
      {span.metadataJson === null ? (
        <p className="muted">No attributes recorded.</p>
      ) : table && view === 'table' && metadata.ok ? (
        <AttributeTable metadata={metadata.value} />
      ) : (
        <JsonBlock value={span.metadataJson} label="Metadata JSON" />
      )}
    </section>
  );
}

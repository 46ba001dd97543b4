'use client';

import { useQuery } from '@tanstack/react-query';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Badge } from '@/components/ui/Badge';
import { splitRows, type SplitCell } from '@/components/evals/diff';
import { DiffView } from '@/components/evals/DiffView';
import type { Version } from '@/components/evals/types';
import { useTRPC } from '@/lib/trpc/client';
import { useVersionChoices } from './hooks';
import { VersionPicker } from './VersionPicker';

type Target = { organizationId: string; promptId: string };
type Message = Version['content']['messages'][number];
type Tool = Version['content']['tools'][number];

function Cell({ cell }: { cell: SplitCell }) {
  if (!cell) return <div className="split-cell split-empty" />;
  return (
    <div className={`split-cell split-${cell.kind}`}>
      {cell.kind !== 'same' && cell.words
        ? cell.words.map((word, i) =>
            word.kind === 'same' ? (
              <span key={i}>{word.text}</span>
            ) : (
              <mark key={i} className="diff-word">
                {word.text}
              </mark>
            ),
          )
        : cell.text || ' '}
    </div>
  );
}

function MessageDiff({
  index,
  before,
  after,
  fromNumber,
  toNumber,
}: {
  index: number;
  before: Message | undefined;
  after: Message | undefined;
  fromNumber: number;
  toNumber: number;
}) {
  const changed = before?.content !== after?.content || before?.role !== after?.role;
  const status = !before ? 'Added' : !after ? 'Removed' : changed ? 'Changed' : 'Unchanged';
  const rows = splitRows(before?.content ?? '', after?.content ?? '');
  return (
    <section
      className="message-diff"
      aria-label={`Message ${index + 1}: ${status.toLowerCase()}`}
      data-status={status.toLowerCase()}
    >
      <header className="message-diff-head">
        <strong>Message {index + 1}</strong>
        <span className="muted">
          {before?.role ?? after?.role ?? '—'}
          {before && after && before.role !== after.role ? ` → ${after.role}` : ''}
        </span>
        <Badge
          tone={
            status === 'Unchanged'
              ? 'neutral'
              : status === 'Removed'
                ? 'danger'
                : status === 'Added'
                  ? 'success'
                  : 'warning'
          }
        >
          {status}
        </Badge>
      </header>
      <div className="split" role="table" aria-label={`Message ${index + 1}, v${fromNumber} and v${toNumber}`}>
        <div className="split-row split-header" role="row">
          <div role="columnheader">v{fromNumber}</div>
          <div role="columnheader">v{toNumber}</div>
        </div>
        {rows.map((row, i) => (
          <div key={i} className="split-row" role="row">
            <div role="cell">
              <Cell cell={row.left} />
            </div>
            <div role="cell">
              <Cell cell={row.right} />
            </div>
          </div>
        ))}
      </div>
    </section>
  );
}

function settingText(value: unknown): string {
  if (value === undefined || value === null || value === '') return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 1);
}

function SettingsChanges({ from, to }: { from: Version; to: Version }) {
  const fields: { label: string; a: unknown; b: unknown }[] = [
    { label: 'Model', a: `${from.content.modelRouteId}`, b: `${to.content.modelRouteId}` },
    { label: 'Temperature', a: from.content.temperature, b: to.content.temperature },
    {
      label: 'Max output tokens',
      a: from.content.maxOutputTokens ?? 'Model default',
      b: to.content.maxOutputTokens ?? 'Model default',
    },
    { label: 'Input', a: from.content.inputType, b: to.content.inputType },
    { label: 'Output schema', a: from.content.outputSchema, b: to.content.outputSchema },
    {
      label: 'Custom metrics',
      a: from.content.customMetrics
        .map((m) => `${m.name} (${m.type}${m.value !== undefined ? `: ${m.value}` : ''})`)
        .join('\n'),
      b: to.content.customMetrics
        .map((m) => `${m.name} (${m.type}${m.value !== undefined ? `: ${m.value}` : ''})`)
        .join('\n'),
    },
  ];
  const changed = fields.filter((field) => settingText(field.a) !== settingText(field.b));
  return (
    <div className="stack-sm">
      <span className="field-label">Settings</span>
      {changed.length === 0 ? (
        <p className="muted">
          Model, temperature, max output tokens, input type, output schema and custom metrics are the same.
        </p>
      ) : (
        <table className="table settings-diff" aria-label="Settings changes">
          <thead>
            <tr>
              <th scope="col">Setting</th>
              <th scope="col">v{from.number}</th>
              <th scope="col">v{to.number}</th>
            </tr>
          </thead>
          <tbody>
            {changed.map((field) => (
              <tr key={field.label}>
                <td>
                  <strong>{field.label}</strong>
                </td>
                <td>
                  <pre className="setting-old">{settingText(field.a)}</pre>
                </td>
                <td>
                  <pre className="setting-new">{settingText(field.b)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

// What a tool says besides its name, as the text the diff compares.
const toolText = (tool: Tool) =>
  JSON.stringify({ description: tool.description, parameters: tool.parameters }, null, 2);

// Tools matched by name: added, removed, or changed (description or parameters) with a line diff.
function ToolChanges({ from, to }: { from: Version; to: Version }) {
  const before = new Map(from.content.tools.map((tool) => [tool.name, tool]));
  const after = new Map(to.content.tools.map((tool) => [tool.name, tool]));
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const rows = names.map((name) => {
    const a = before.get(name);
    const b = after.get(name);
    const status = !a ? 'Added' : !b ? 'Removed' : toolText(a) !== toolText(b) ? 'Changed' : 'Unchanged';
    return { name, a, b, status };
  });
  const unchanged = rows.filter((row) => row.status === 'Unchanged');
  const changed = rows.filter((row) => row.status !== 'Unchanged');
  return (
    <div className="stack-sm">
      <span className="field-label">Tools</span>
      {names.length === 0 ? <p className="muted">Neither version has tools.</p> : null}
      {names.length > 0 && changed.length === 0 ? <p className="muted">The tools are the same.</p> : null}
      {changed.map(({ name, a, b, status }) => (
        <section
          key={name}
          className="message-diff"
          aria-label={`Tool ${name}: ${status.toLowerCase()}`}
          data-status={status.toLowerCase()}
        >
          <header className="message-diff-head">
            <strong className="mono">{name}</strong>
            <Badge tone={status === 'Removed' ? 'danger' : status === 'Added' ? 'success' : 'warning'}>{status}</Badge>
          </header>
          <DiffView
            before={a ? toolText(a) : ''}
            after={b ? toolText(b) : ''}
            beforeLabel={`v${from.number}`}
            afterLabel={`v${to.number}`}
            label={`Tool ${name}, v${from.number} and v${to.number}`}
          />
        </section>
      ))}
      {changed.length > 0 && unchanged.length > 0 ? (
        <p className="muted">Unchanged: {unchanged.map((row) => row.name).join(', ')}.</p>
      ) : null}
    </div>
  );
}

export function VersionCompare({
  target,
  versions,
  from,
  to,
  onChange,
}: {
  target: Target;
  versions: Version[];
  from: number | null;
  to: number | null;
  onChange: (from: number, to: number) => void;
}) {
  const trpc = useTRPC();
  const a = useQuery({
    ...trpc.versions.get.queryOptions({ ...target, number: from ?? 1 }, { staleTime: Infinity }),
    enabled: from !== null,
  });
  const b = useQuery({
    ...trpc.versions.get.queryOptions({ ...target, number: to ?? 1 }, { staleTime: Infinity }),
    enabled: to !== null,
  });

  const choices = useVersionChoices(target);
  // The pickers hold version ids; the URL holds numbers (?compare=1..106 may name a version no page loaded).
  const idOf = (number: number | null, loaded: { id: string; number: number } | undefined) =>
    number === null
      ? ''
      : (choices.versions.find((version) => version.number === number)?.id ??
        (loaded?.number === number ? loaded.id : ''));

  if (versions.length < 2 || from === null || to === null) {
    return (
      <Card>
        <CardHeader title="Compare versions" />
        <EmptyState
          title="Nothing to compare yet"
          description="Save a second version to see what changed between any two versions."
        />
      </Card>
    );
  }
  const maxMessages = Math.max(a.data?.content.messages.length ?? 0, b.data?.content.messages.length ?? 0);
  return (
    <Card id="compare">
      <CardHeader
        title="Compare versions"
        description="Messages side by side with changed lines and words marked, then the settings and tools that differ."
        actions={
          <div className="inline">
            <VersionPicker
              target={target}
              compact
              aria-label="Base version"
              numberLabel="Base version number"
              value={idOf(from, a.data)}
              selectedNumber={from}
              placeholder={`v${from}`}
              onChange={(version) => onChange(version.number, to)}
            />
            <span className="muted">→</span>
            <VersionPicker
              target={target}
              compact
              aria-label="Compared version"
              numberLabel="Compared version number"
              value={idOf(to, b.data)}
              selectedNumber={to}
              placeholder={`v${to}`}
              onChange={(version) => onChange(from, version.number)}
            />
          </div>
        }
      />
      <CardBody className="stack">
        {a.isError ? (
          <QueryErrorState title={`Could not load v${from}`} query={a} />
        ) : b.isError ? (
          <QueryErrorState title={`Could not load v${to}`} query={b} />
        ) : !a.data || !b.data ? (
          <SkeletonRows rows={4} label="Loading versions" />
        ) : (
          <>
            {from === to ? <p className="muted">Both sides are v{from}: choose two different versions.</p> : null}
            <div className="stack-sm">
              <span className="field-label">Messages</span>
              {Array.from({ length: maxMessages }, (_, i) => (
                <MessageDiff
                  key={i}
                  index={i}
                  before={a.data.content.messages[i]}
                  after={b.data.content.messages[i]}
                  fromNumber={a.data.number}
                  toNumber={b.data.number}
                />
              ))}
              {maxMessages === 0 ? <p className="muted">Neither version has messages.</p> : null}
            </div>
            <SettingsChanges from={a.data} to={b.data} />
            <ToolChanges from={a.data} to={b.data} />
          </>
        )}
      </CardBody>
    </Card>
  );
}

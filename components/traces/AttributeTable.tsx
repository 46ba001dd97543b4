'use client';

import { useId, useMemo, useState } from 'react';
import { attributeGroups, visibleAttributes, type AttributeRow, type AttributeSort } from './attributes';
import { LongText } from './ChatTranscript';

// Dotted and snake_case keys break after their separators rather than mid-word.
function BreakableKey({ name }: { name: string }) {
  const pieces = name.split(/(?<=[._/-])/);
  return (
    <>
      {pieces.map((piece, index) => (
        <span key={index}>
          {index > 0 ? <wbr /> : null}
          {piece}
        </span>
      ))}
    </>
  );
}

function Value({ row }: { row: AttributeRow }) {
  if (typeof row.value === 'string') return <LongText text={row.value} limit={300} />;
  const type = row.value === null ? 'null' : Array.isArray(row.value) ? 'array' : typeof row.value;
  return (
    <code className={`attr-value attr-value-${type}`}>
      <LongText text={row.text} limit={300} />
    </code>
  );
}

function SortHeader({
  by,
  label,
  sort,
  onSort,
}: {
  by: AttributeSort['by'];
  label: string;
  sort: AttributeSort;
  onSort: (sort: AttributeSort) => void;
}) {
  const active = sort.by === by;
  const next: AttributeSort = {
    by,
    direction: active && sort.direction === 'ascending' ? 'descending' : 'ascending',
  };
  return (
    <th scope="col" aria-sort={active ? sort.direction : 'none'}>
      <button type="button" className="attr-sort" onClick={() => onSort(next)}>
        {label}
        <span className="attr-sort-arrow" aria-hidden="true">
          {active ? (sort.direction === 'ascending' ? '↑' : '↓') : '↕'}
        </span>
      </button>
    </th>
  );
}

/**
 * A span's metadata as a filterable, sortable key–value table, span attributes, resource attributes
 * and our otel.* fields apart. Null when the metadata is not an object (the caller shows the JSON).
 */
export function AttributeTable({ metadata }: { metadata: unknown }) {
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<AttributeSort>({ by: 'key', direction: 'ascending' });
  const groups = useMemo(() => attributeGroups(metadata) ?? [], [metadata]);
  const visible = useMemo(() => visibleAttributes(groups, query, sort), [groups, query, sort]);
  const filterId = useId();
  const total = groups.reduce((sum, group) => sum + group.rows.length, 0);
  const shown = visible.reduce((sum, group) => sum + group.rows.length, 0);
  return (
    <div className="attr">
      <div className="attr-tools">
        <label className="visually-hidden" htmlFor={filterId}>
          Filter attributes
        </label>
        <input
          id={filterId}
          className="input attr-filter"
          type="search"
          placeholder="Filter by key or value"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          autoComplete="off"
          spellCheck={false}
        />
        <span className="attr-count" aria-live="polite">
          {query.trim() ? `${shown} of ${total}` : `${total} ${total === 1 ? 'key' : 'keys'}`}
        </span>
      </div>
      {shown === 0 ? (
        <p className="muted attr-none">No attributes match “{query.trim()}”.</p>
      ) : (
        <table className="attr-table" aria-label="Attributes">
          <thead>
            <tr>
              <SortHeader by="key" label="Key" sort={sort} onSort={setSort} />
              <SortHeader by="value" label="Value" sort={sort} onSort={setSort} />
            </tr>
          </thead>
          {visible.map((group) => (
            <tbody key={group.id} aria-label={group.title}>
              {groups.length > 1 || group.id !== 'span' ? (
                <tr className="attr-group">
                  <th scope="colgroup" colSpan={2}>
                    {group.title}
                    <span className="attr-group-count">{group.rows.length}</span>
                  </th>
                </tr>
              ) : null}
              {group.rows.map((row) => (
                <tr key={row.key} data-key={row.key}>
                  <th scope="row" className="attr-key" title={row.key}>
                    <BreakableKey name={row.name} />
                  </th>
                  <td>
                    <Value row={row} />
                  </td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      )}
    </div>
  );
}

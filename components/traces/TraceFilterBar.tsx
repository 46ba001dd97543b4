'use client';

import { useEffect, useState, type FormEvent } from 'react';
import { Button } from '@/components/ui/Button';
import { Field, Input, Select } from '@/components/ui/Field';
import { kindLabel, statusLabel } from './StatusBadge';
import { emptyFilters, hasFilters, kindOptions, rangeOptions, statusOptions, type TraceFilters } from './filters';

// Selects apply at once; text filters apply on Enter or when the field loses focus.
export function TraceFilterBar({
  filters,
  onChange,
}: {
  filters: TraceFilters;
  onChange: (filters: TraceFilters) => void;
}) {
  const [text, setText] = useState({
    service: filters.service,
    sessionId: filters.sessionId,
    endUserId: filters.endUserId,
  });
  useEffect(
    () => setText({ service: filters.service, sessionId: filters.sessionId, endUserId: filters.endUserId }),
    [filters.service, filters.sessionId, filters.endUserId],
  );

  const commitText = () => {
    const next = {
      ...filters,
      service: text.service.trim(),
      sessionId: text.sessionId.trim(),
      endUserId: text.endUserId.trim(),
    };
    if (
      next.service !== filters.service ||
      next.sessionId !== filters.sessionId ||
      next.endUserId !== filters.endUserId
    )
      onChange(next);
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    commitText();
  };
  const textInput = (key: keyof typeof text) => ({
    value: text[key],
    onChange: (e: { target: { value: string } }) => setText((t) => ({ ...t, [key]: e.target.value })),
    onBlur: commitText,
  });

  return (
    <form onSubmit={onSubmit} aria-label="Filter traces" role="search">
      <div className="trace-filters">
        <Field label="Time range">
          <Select name="range" value={filters.range} onChange={(e) => onChange({ ...filters, range: e.target.value })}>
            <option value="">All time</option>
            {rangeOptions.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Status">
          <Select
            name="status"
            value={filters.status}
            onChange={(e) => onChange({ ...filters, status: e.target.value })}
          >
            <option value="">Any status</option>
            {statusOptions.map((s) => (
              <option key={s} value={s}>
                {statusLabel[s]}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Contains span kind">
          <Select name="kind" value={filters.kind} onChange={(e) => onChange({ ...filters, kind: e.target.value })}>
            <option value="">Any kind</option>
            {kindOptions.map((k) => (
              <option key={k} value={k}>
                {kindLabel[k]}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Service">
          <Input name="service" placeholder="e.g. checkout-api" maxLength={100} {...textInput('service')} />
        </Field>
        <Field label="Session">
          <Input name="sessionId" placeholder="Session ID" maxLength={200} {...textInput('sessionId')} />
        </Field>
        <Field label="End user">
          <Input name="endUserId" placeholder="End user ID" maxLength={200} {...textInput('endUserId')} />
        </Field>
      </div>
      {/* Enter in a text field submits; the button is for pointer users. */}
      <button type="submit" className="visually-hidden" tabIndex={-1}>
        Apply filters
      </button>
      {hasFilters(filters) ? (
        <div className="trace-filters-actions">
          <span className="muted">Filtered view</span>
          <Button size="sm" variant="ghost" onClick={() => onChange(emptyFilters)}>
            Clear filters
          </Button>
        </div>
      ) : null}
    </form>
  );
}

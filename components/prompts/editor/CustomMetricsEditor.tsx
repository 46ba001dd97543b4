'use client';

import { useRef, useState } from 'react';
import { Button } from '@/components/ui/Button';
import { Input, Select } from '@/components/ui/Field';
import { PlusIcon, TrashIcon } from '@/components/ui/icons';
import { metricTypeOptions, type CustomMetric, type MetricType } from '../types';
import { FieldError } from '@/components/ui/FieldError';

function ValueInput({
  metric,
  index,
  readOnly,
  error,
  onChange,
}: {
  metric: CustomMetric;
  index: number;
  readOnly: boolean;
  error?: string;
  onChange: (value: CustomMetric['value']) => void;
}) {
  const kind = metricTypeOptions.find((option) => option.value === metric.type)?.valueKind ?? 'text';
  const common = {
    'aria-label': `Value of metric ${index + 1}`,
    readOnly,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': error ? `metric-${index}-value-error` : undefined,
  };
  if (kind === 'none') {
    return (
      <p className="metric-novalue muted">
        {metric.type === 'is_json'
          ? 'Passes when the output parses as JSON.'
          : 'Checks the output against the output schema.'}
      </p>
    );
  }
  if (kind === 'number') {
    return (
      <Input
        type="number"
        min={1}
        step={1}
        placeholder="280"
        value={typeof metric.value === 'number' ? metric.value : ''}
        onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        {...common}
      />
    );
  }
  return (
    <Input
      className={kind === 'regex' ? 'mono' : undefined}
      placeholder={kind === 'regex' ? '^\\d{3}-\\d{4}$' : 'refund'}
      value={typeof metric.value === 'string' ? metric.value : ''}
      onChange={(e) => onChange(e.target.value)}
      {...common}
    />
  );
}

export function CustomMetricsEditor({
  metrics,
  readOnly,
  issues,
  onChange,
}: {
  metrics: CustomMetric[];
  readOnly: boolean;
  issues: Record<string, string>;
  onChange: (metrics: CustomMetric[]) => void;
}) {
  // The metric just added: its (empty, so invalid) fields say nothing until the person has typed in
  // them, and focus goes to its name, as Add tool does. Removing one hands focus to Add metric.
  const [untouched, setUntouched] = useState<number | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const update = (index: number, next: CustomMetric) => {
    if (index === untouched) setUntouched(null);
    onChange(metrics.map((metric, i) => (i === index ? next : metric)));
  };
  const add = () => {
    const index = metrics.length;
    onChange([...metrics, { name: '', type: 'contains', value: '' }]);
    setUntouched(index);
    requestAnimationFrame(() => document.getElementById(`metric-${index}-name`)?.focus());
  };
  const remove = (index: number) => {
    setUntouched(null);
    onChange(metrics.filter((_, i) => i !== index));
    requestAnimationFrame(() => addButton.current?.focus());
  };
  const changeType = (metric: CustomMetric, type: MetricType): CustomMetric => {
    const kind = metricTypeOptions.find((option) => option.value === type)?.valueKind;
    const { value, ...rest } = metric;
    if (kind === 'none') return { ...rest, type };
    if (kind === 'number') return { ...rest, type, value: typeof value === 'number' ? value : undefined };
    return { ...rest, type, value: typeof value === 'string' ? value : '' };
  };

  return (
    <div className="stack-sm">
      {metrics.length === 0 ? (
        <p className="muted">
          No custom metrics. Add checks every output must pass, such as “contains” or “at most N characters”.
        </p>
      ) : null}
      {metrics.length > 0 ? (
        <div className="metric-list" role="list" aria-label="Custom metrics">
          <div className="metric-row metric-row-head" aria-hidden="true">
            <span>Name</span>
            <span>Check</span>
            <span>Value</span>
            <span />
          </div>
          {metrics.map((metric, index) => {
            const issue = (field: string) =>
              index === untouched ? undefined : issues[`content.customMetrics.${index}${field}`];
            const nameError = issue('.name');
            const typeError = issue('.type');
            const valueError = issue('.value') ?? issue('');
            return (
              <div className="metric-row" role="listitem" key={index}>
                <div className="stack-xs">
                  <Input
                    id={`metric-${index}-name`}
                    aria-label={`Name of metric ${index + 1}`}
                    placeholder="mentions_refund"
                    value={metric.name}
                    readOnly={readOnly}
                    aria-invalid={nameError ? true : undefined}
                    aria-describedby={nameError ? `metric-${index}-name-error` : undefined}
                    onChange={(e) => update(index, { ...metric, name: e.target.value })}
                  />
                  <FieldError id={`metric-${index}-name-error`} message={nameError} />
                </div>
                <div className="stack-xs">
                  <Select
                    aria-label={`Check of metric ${index + 1}`}
                    value={metric.type}
                    disabled={readOnly}
                    onChange={(e) => update(index, changeType(metric, e.target.value as MetricType))}
                  >
                    {metricTypeOptions.map((option) => (
                      <option key={option.value} value={option.value}>
                        {option.label}
                      </option>
                    ))}
                  </Select>
                  <FieldError id={`metric-${index}-type-error`} message={typeError} />
                </div>
                <div className="stack-xs">
                  <ValueInput
                    metric={metric}
                    index={index}
                    readOnly={readOnly}
                    error={valueError}
                    onChange={(value) => update(index, { ...metric, value })}
                  />
                  <FieldError id={`metric-${index}-value-error`} message={valueError} />
                </div>
                <div>
                  {!readOnly ? (
                    <Button
                      size="sm"
                      variant="ghost"
                      aria-label={`Remove metric ${index + 1}`}
                      onClick={() => remove(index)}
                    >
                      <TrashIcon size={14} />
                    </Button>
                  ) : null}
                </div>
              </div>
            );
          })}
        </div>
      ) : null}
      {!readOnly ? (
        <div>
          <Button ref={addButton} size="sm" icon={<PlusIcon size={14} />} onClick={add}>
            Add metric
          </Button>
        </div>
      ) : null}
    </div>
  );
}

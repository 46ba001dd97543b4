'use client';

import { Select } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { formatOptions, type CaseFormat, type CaseRow } from './types';

export type CaseDraft = { input: string; expectedOutput: string; inputFormat: CaseFormat; referenceFormat: CaseFormat };

export const emptyCase: CaseDraft = { input: '', expectedOutput: '', inputFormat: 'text', referenceFormat: 'text' };

function jsonError(text: string, format: CaseFormat): string | null {
  if (format !== 'json') return null;
  try {
    JSON.parse(text);
    return null;
  } catch {
    return 'Not valid JSON (the format is JSON).';
  }
}

// Errors the browser can see before sending, keyed like the server's issue paths (row.input, …).
export function caseErrors(draft: CaseDraft): Record<string, string> {
  const errors: Record<string, string> = {};
  if (draft.input.trim() === '') errors['row.input'] = 'Enter the input.';
  else {
    const error = jsonError(draft.input, draft.inputFormat);
    if (error) errors['row.input'] = error;
  }
  const referenceError =
    draft.expectedOutput.trim() === '' ? null : jsonError(draft.expectedOutput, draft.referenceFormat);
  if (referenceError) errors['row.expectedOutput'] = referenceError;
  return errors;
}

export function toCaseRow(draft: CaseDraft): CaseRow {
  return {
    input: draft.input,
    expectedOutput: draft.expectedOutput,
    inputFormat: draft.inputFormat,
    referenceFormat: draft.referenceFormat,
  };
}

// Input, expected output and their formats; used by the add form and inline editing.
export function CaseFields({
  idPrefix,
  value,
  errors,
  onChange,
  autoFocus,
}: {
  idPrefix: string;
  value: CaseDraft;
  errors: Record<string, string>;
  onChange: (value: CaseDraft) => void;
  autoFocus?: boolean;
}) {
  const field = (
    name: 'input' | 'expectedOutput',
    formatName: 'inputFormat' | 'referenceFormat',
    label: string,
    placeholder: string,
  ) => {
    const error = errors[`row.${name}`] ?? errors[name];
    const formatError = errors[`row.${formatName}`] ?? errors[formatName];
    const id = `${idPrefix}-${name}`;
    return (
      <div className="case-field">
        <div className="case-field-head">
          <label className="field-label" htmlFor={id}>
            {label}
          </label>
          <Select
            compact
            aria-label={`${label} format`}
            value={value[formatName]}
            onChange={(e) => onChange({ ...value, [formatName]: e.target.value as CaseFormat })}
          >
            {formatOptions.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </Select>
        </div>
        <textarea
          id={id}
          className={['textarea', value[formatName] === 'json' && 'mono'].filter(Boolean).join(' ')}
          rows={3}
          value={value[name]}
          placeholder={placeholder}
          autoFocus={autoFocus && name === 'input'}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          onChange={(e) => onChange({ ...value, [name]: e.target.value })}
        />
        <FieldError id={`${id}-error`} message={error} />
        <FieldError id={`${id}-format-error`} message={formatError} />
      </div>
    );
  };
  return (
    <div className="case-fields">
      {field('input', 'inputFormat', 'Input', 'What the user sends, or the variables as JSON…')}
      {field('expectedOutput', 'referenceFormat', 'Expected output', 'A reference answer to score against…')}
    </div>
  );
}

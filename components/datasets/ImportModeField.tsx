'use client';

import type { ImportMode } from './types';

// Append or replace; the hint says what replacing deletes.
export function ImportModeField({
  mode,
  existingCount,
  onChange,
}: {
  mode: ImportMode;
  existingCount: number;
  onChange: (mode: ImportMode) => void;
}) {
  return (
    <fieldset className="segmented-field">
      <legend className="field-label">Mode</legend>
      <div className="segmented" role="radiogroup" aria-label="Import mode">
        {(['append', 'replace'] as const).map((value) => (
          <label key={value} className="segment" data-checked={mode === value || undefined}>
            <input
              type="radio"
              name="import-mode"
              value={value}
              checked={mode === value}
              onChange={() => onChange(value)}
            />
            {value === 'append' ? 'Append' : 'Replace all'}
          </label>
        ))}
      </div>
      <p className="field-hint">
        {mode === 'append'
          ? 'New cases go after the existing ones; exact duplicates are skipped.'
          : `Deletes the ${existingCount} existing cases first.`}
      </p>
    </fieldset>
  );
}

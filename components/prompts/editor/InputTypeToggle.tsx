'use client';

import type { InputType } from '../types';

const options: { value: InputType; label: string; hint: string }[] = [
  {
    value: 'user_message',
    label: 'User message',
    hint: 'Each test case is sent as the user’s message after these messages.',
  },
  { value: 'variables', label: 'Variables', hint: 'Test cases fill the {{variables}} in these messages.' },
];

export function InputTypeToggle({
  value,
  readOnly,
  onChange,
}: {
  value: InputType;
  readOnly: boolean;
  onChange: (value: InputType) => void;
}) {
  return (
    <fieldset className="segmented-field">
      <legend className="field-label">Input</legend>
      <div className="segmented" role="radiogroup" aria-label="Input type">
        {options.map((option) => (
          <label key={option.value} className="segment" data-checked={value === option.value || undefined}>
            <input
              type="radio"
              name="inputType"
              value={option.value}
              checked={value === option.value}
              disabled={readOnly}
              onChange={() => onChange(option.value)}
            />
            {option.label}
          </label>
        ))}
      </div>
      <p className="field-hint">{options.find((option) => option.value === value)?.hint}</p>
    </fieldset>
  );
}

export function VariableChips({ names }: { names: string[] }) {
  if (names.length === 0) {
    return <p className="field-hint">No variables yet: write {'{{name}}'} in a message to add one.</p>;
  }
  return (
    <div className="inline" role="group" aria-label="Variables in the messages">
      <span className="field-hint">Variables:</span>
      {names.map((name) => (
        <span key={name} className="var-chip">
          {name}
        </span>
      ))}
    </div>
  );
}

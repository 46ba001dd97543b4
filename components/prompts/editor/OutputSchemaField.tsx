'use client';

import { Field } from '@/components/ui/Field';

export function OutputSchemaField({
  value,
  readOnly,
  error,
  onChange,
}: {
  value: string;
  readOnly: boolean;
  error?: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field
      id="output-schema"
      label="Output schema"
      error={error}
      hint="Optional JSON Schema the output should match; leave empty for free text."
    >
      <textarea
        id="output-schema"
        className="textarea mono"
        aria-invalid={error ? true : undefined}
        aria-describedby={[error ? 'output-schema-error' : '', 'output-schema-hint'].filter(Boolean).join(' ')}
        rows={Math.min(14, Math.max(4, value.split('\n').length + 1))}
        value={value}
        readOnly={readOnly}
        spellCheck={false}
        placeholder={
          '{\n  "type": "object",\n  "properties": { "answer": { "type": "string" } },\n  "required": ["answer"]\n}'
        }
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}

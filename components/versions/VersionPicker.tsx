'use client';

import { useId, useState, type KeyboardEvent } from 'react';
import { Button } from '@/components/ui/Button';
import { Input, Select } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { byNumberOption, loadOlderOption, parseVersionNumber, type VersionChoice } from './choices';
import { useVersionChoices } from './hooks';
import './version-picker.css';

type Target = { organizationId: string; promptId: string };

// The one version picker of the Versions page (move, split, new label, compare): the versions
// loaded so far, newest first, then "Load older versions…" (the next 100) and "Go to a version
// number…", which looks any number up and says next to the field when the prompt has no such
// version. Inside a <Field>, the select takes the field's label and error.
export function VersionPicker({
  target,
  value,
  onChange,
  note,
  placeholder,
  selectedNumber,
  compact,
  numberLabel = 'Version number',
  id,
  'aria-label': ariaLabel,
  'aria-invalid': ariaInvalid,
  'aria-describedby': ariaDescribedBy,
}: {
  target: Target;
  // The chosen version's id; '' for none yet.
  value: string;
  onChange: (version: VersionChoice) => void;
  // Said after a version's number in its option, e.g. " (current)".
  note?: (version: VersionChoice) => string;
  // The option shown while nothing is chosen.
  placeholder?: string;
  // The chosen version's number, for when it is in none of the loaded pages yet.
  selectedNumber?: number;
  compact?: boolean;
  // The accessible name of the number field.
  numberLabel?: string;
  id?: string;
  'aria-label'?: string;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}) {
  const choices = useVersionChoices(target);
  const [entering, setEntering] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [finding, setFinding] = useState(false);
  const numberId = useId();
  const errorId = `${numberId}-error`;
  const listed = choices.versions.some((version) => version.id === value);
  const chosenNumber = selectedNumber ?? choices.numberOf(value);

  function pick(next: string) {
    if (next === loadOlderOption) return choices.loadOlder();
    if (next === byNumberOption) return (setEntering(true), setError(null));
    const version = choices.versions.find((item) => item.id === next);
    if (version) onChange(version);
  }

  async function go() {
    const parsed = parseVersionNumber(text);
    if (parsed.error !== null) return setError(parsed.error);
    setFinding(true);
    const found = await choices.find(parsed.number);
    setFinding(false);
    if (found.error !== null) return setError(found.error);
    setError(null);
    setText('');
    setEntering(false);
    onChange(found.version);
  }

  function keyDown(event: KeyboardEvent<HTMLInputElement>) {
    // Enter looks the number up; it never submits the form around the picker.
    if (event.key === 'Enter') {
      event.preventDefault();
      void go();
    }
  }

  return (
    <div className={['version-picker', compact && 'version-picker-compact'].filter(Boolean).join(' ')}>
      <Select
        compact={compact}
        id={id}
        aria-label={ariaLabel}
        aria-invalid={ariaInvalid}
        aria-describedby={ariaDescribedBy}
        value={value}
        onChange={(e) => pick(e.target.value)}
      >
        {value === '' ? <option value="">{placeholder ?? 'Choose…'}</option> : null}
        {value !== '' && !listed ? (
          <option value={value}>{chosenNumber === undefined ? 'The chosen version' : `v${chosenNumber}`}</option>
        ) : null}
        {choices.versions.map((version) => (
          <option key={version.id} value={version.id}>
            v{version.number}
            {note?.(version) ?? ''}
          </option>
        ))}
        {choices.hasOlder ? (
          <>
            <option value={loadOlderOption} disabled={choices.loadingOlder}>
              {choices.loadingOlder ? 'Loading older versions…' : 'Load older versions…'}
            </option>
            <option value={byNumberOption}>Go to a version number…</option>
          </>
        ) : null}
      </Select>
      {entering ? (
        <div className="version-picker-number">
          <Input
            id={numberId}
            aria-label={numberLabel}
            inputMode="numeric"
            autoComplete="off"
            placeholder="e.g. 1"
            autoFocus
            value={text}
            aria-invalid={error ? true : false}
            aria-describedby={error ? errorId : undefined}
            onChange={(e) => (setText(e.target.value), setError(null))}
            onKeyDown={keyDown}
          />
          <Button size="sm" loading={finding} onClick={() => void go()}>
            Go
          </Button>
          <Button
            size="sm"
            variant="ghost"
            aria-label={`Close ${numberLabel.toLowerCase()}`}
            onClick={() => (setEntering(false), setError(null), setText(''))}
          >
            ×
          </Button>
          <FieldError id={errorId} message={error} />
        </div>
      ) : null}
    </div>
  );
}

'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Button } from '@/components/ui/Button';
import { Field, Input } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { FormDialog } from '@/components/ui/FormDialog';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import type { ReleasePolicy } from '@/server/releases/schemas';
import type { Target } from './hooks';
import { draftOf, parsePolicyDraft, protectedLabelError, type PolicyDraft } from './rules';

const fieldNames = ['protectedLabels', 'requireEvaluation', 'maxPassRateDrop', 'maxRegressions'];

// A server validation issue's path may name an item ('protectedLabels.2'): show it on its field.
function serverFieldErrors(info: AppErrorInfo | null): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [path, message] of Object.entries(info?.fields ?? {})) {
    const field = fieldNames.find((name) => path === name || path.startsWith(`${name}.`));
    if (field) errors[field] ??= message;
  }
  return errors;
}

// The admin's form for the whole policy (PUT replaces all four fields): protected labels as chips,
// the evaluation switch, and the thresholds in the units people think in (percent, cases).
export function PolicyDialog({
  target,
  policy,
  knownLabels,
  onClose,
  onSaved,
}: {
  target: Target;
  policy: ReleasePolicy;
  knownLabels: string[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<PolicyDraft>(() => draftOf(policy));
  const [newLabel, setNewLabel] = useState('');
  const [labelError, setLabelError] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const newLabelRef = useRef<HTMLInputElement>(null);
  // Open on the first field, not on the first "×": one Enter there would unprotect a label. Runs
  // after the dialog's own effect has shown it (and given focus to its first focusable element).
  useEffect(() => newLabelRef.current?.focus(), []);
  const [serverError, setServerError] = useState<AppErrorInfo | null>(null);
  const save = useMutation(
    trpc.versions.setReleasePolicy.mutationOptions({
      onSuccess: (saved) => queryClient.setQueryData(trpc.versions.releasePolicy.queryKey(target), saved),
      onSettled: () => queryClient.invalidateQueries(trpc.versions.releasePolicy.queryFilter(target)),
    }),
  );
  const shownErrors = { ...serverFieldErrors(serverError), ...errors };
  const suggestions = knownLabels.filter((label) => !draft.protectedLabels.includes(label));

  function addLabel(name = newLabel.trim()) {
    const problem = protectedLabelError(name, draft.protectedLabels);
    setLabelError(problem);
    if (problem) return;
    setDraft({ ...draft, protectedLabels: [...draft.protectedLabels, name] });
    setNewLabel('');
  }

  function onLabelKey(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'Enter' || event.key === ',') {
      event.preventDefault();
      addLabel();
    }
  }

  function submit() {
    setServerError(null);
    // A name typed but not added yet counts: add it, or say what is wrong with it.
    let current = draft;
    const pending = newLabel.trim();
    let labelProblem: string | null = null;
    if (!pending) setLabelError(null);
    else if (draft.protectedLabels.includes(pending)) {
      // Already protected: nothing to add, and nothing to hold the save back.
      setNewLabel('');
      setLabelError(null);
    } else {
      labelProblem = protectedLabelError(pending, draft.protectedLabels);
      setLabelError(labelProblem);
      if (!labelProblem) {
        current = { ...draft, protectedLabels: [...draft.protectedLabels, pending] };
        setDraft(current);
        setNewLabel('');
      }
    }
    // Every field says what is wrong at once, the typed label's problem included.
    const parsed = parsePolicyDraft(current);
    setErrors(parsed.errors ?? {});
    if (labelProblem || !parsed.policy) return;
    save.mutate(
      { ...target, ...parsed.policy },
      { onSuccess: () => (onSaved(), onClose()), onError: (e) => setServerError(readAppError(e)) },
    );
  }

  return (
    <FormDialog
      open
      onClose={() => !save.isPending && onClose()}
      title="Edit release policy"
      description="Applies from the next label move on. Moving a label back to a version it served before is always allowed."
      submitLabel="Save policy"
      pending={save.isPending}
      onSubmit={submit}
      error={serverError}
      fieldNames={fieldNames}
    >
      <div className="field">
        <label className="field-label" htmlFor="policy-new-label">
          Protected labels
        </label>
        <ul className="chip-list" aria-label="Labels protected now">
          {draft.protectedLabels.length === 0 ? <li className="subtle">None: every label moves freely.</li> : null}
          {draft.protectedLabels.map((label) => (
            <li key={label} className="label-chip chip-removable">
              {label}
              <button
                type="button"
                className="chip-remove"
                aria-label={`Stop protecting ${label}`}
                onClick={() => {
                  setDraft({ ...draft, protectedLabels: draft.protectedLabels.filter((item) => item !== label) });
                  // The chip and its button go away: continue in the field that adds labels.
                  newLabelRef.current?.focus();
                }}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
        <div className="inline chip-add">
          <Input
            ref={newLabelRef}
            id="policy-new-label"
            value={newLabel}
            placeholder="e.g. staging"
            maxLength={64}
            list="policy-label-suggestions"
            aria-invalid={labelError || shownErrors.protectedLabels ? true : undefined}
            aria-describedby="policy-label-error policy-label-hint"
            onChange={(e) => (setNewLabel(e.target.value), setLabelError(null))}
            onKeyDown={onLabelKey}
          />
          <datalist id="policy-label-suggestions">
            {suggestions.map((label) => (
              <option key={label} value={label} />
            ))}
          </datalist>
          <Button onClick={() => addLabel()}>Add label</Button>
        </div>
        <FieldError id="policy-label-error" message={labelError ?? shownErrors.protectedLabels} />
        <p className="field-hint" id="policy-label-hint">
          Up to 10. Moving a protected label to a version it never served has to meet the rules below.
        </p>
      </div>
      <label className="check-row">
        <input
          type="checkbox"
          role="switch"
          checked={draft.requireEvaluation}
          onChange={(e) => setDraft({ ...draft, requireEvaluation: e.target.checked })}
        />
        <span>
          <strong>Require a completed comparison</strong>
          <span className="field-hint">
            A move needs a completed evaluation of the new version against the version the label serves now.
          </span>
        </span>
      </label>
      <div className="form-row policy-thresholds">
        <Field
          label="Max pass-rate drop (percentage points)"
          error={shownErrors.maxPassRateDrop}
          hint="5 lets production’s 80% fall to 75%; 0 means the candidate may not pass fewer cases than production."
        >
          <Input
            inputMode="decimal"
            value={draft.maxPassRateDropPercent}
            onChange={(e) => setDraft({ ...draft, maxPassRateDropPercent: e.target.value })}
          />
        </Field>
        <Field
          label="Max regressions"
          error={shownErrors.maxRegressions}
          hint="Cases that pass on production and fail on the candidate."
        >
          <Input
            inputMode="numeric"
            value={draft.maxRegressions}
            onChange={(e) => setDraft({ ...draft, maxRegressions: e.target.value })}
          />
        </Field>
      </div>
      {!draft.requireEvaluation ? (
        <p className="field-hint">The thresholds apply only while a comparison is required.</p>
      ) : null}
    </FormDialog>
  );
}

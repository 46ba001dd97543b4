'use client';

import { useState, type ReactNode } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { formMessage, readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import { BlockedExplanation, blockedDetails } from './BlockedExplanation';
import { useMoveLabel, type Gate, type Target } from './hooks';
import { OverrideForm, overrideReasonError } from './OverrideForm';
import type { SplitEntry } from './rules';

export type MoveBody = { versionId: string } | { split: SplitEntry[] };

export type GatedBodyState = {
  // The server answered promotion_blocked (its explanation is shown below the form).
  blocked: boolean;
  error: AppErrorInfo | null;
  // Forget the last answer when the form changes.
  clearError: () => void;
};

// The frame every label move shares (one version or a split): the form, the release policy's
// forecast, the server's refusal with its reasons, and for admins the override step with a reason.
export function GatedMoveDialog({
  target,
  label,
  gate,
  isAdmin,
  evalsBase,
  title,
  description,
  submitLabel,
  submitDisabled,
  overridable,
  body,
  fieldNames = [],
  evaluationId,
  successMessage,
  onClose,
  onMoved,
  children,
}: {
  target: Target;
  label: string;
  gate: Gate;
  isAdmin: boolean;
  evalsBase: string;
  title: string;
  description: ReactNode;
  submitLabel: string;
  // Why the move cannot be sent as it is (shown as the button's title), or null.
  submitDisabled: string | null;
  // Whether an override means anything here (an existing label that would change).
  overridable: boolean;
  // The move to send; null when the form has errors (the form shows them).
  body: () => MoveBody | null;
  // Server validation errors the form shows next to its own fields (the rest show above the footer).
  fieldNames?: string[];
  evaluationId: string;
  successMessage: (overridden: boolean) => string;
  onClose: () => void;
  onMoved: (message: string) => void;
  children: (state: GatedBodyState) => ReactNode;
}) {
  const [stage, setStage] = useState<'move' | 'override'>('move');
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | null>(null);
  const [error, setError] = useState<AppErrorInfo | null>(null);
  const move = useMoveLabel(target);
  const blocked = error?.code === 'promotion_blocked' ? blockedDetails(error.details) : null;
  const forecastRefuses = (gate.verdict?.reasons.length ?? 0) > 0;
  const refused = blocked !== null || forecastRefuses;
  const canOverride = isAdmin && overridable && refused;
  // The dialog says the policy will refuse the move (and the label's whole history was read, so it
  // is not a rollback the dashboard cannot see), or the server just refused this very form: sending
  // it could only answer 409 again. The button says so; an admin is pointed at the override instead.
  const refusedForSure = (forecastRefuses && gate.historyComplete) || blocked !== null;
  const disabledReason =
    submitDisabled ??
    (refusedForSure
      ? canOverride
        ? 'The release policy will refuse this move: choose a comparison that meets it, or override it with a reason.'
        : 'The release policy will refuse this move: choose a comparison that meets it (only an admin can override).'
      : null);

  function submit(override?: { reason: string }) {
    const input = body();
    if (!input) return;
    setError(null);
    move.mutate(
      { ...target, label, ...input, ...(evaluationId ? { evaluationId } : {}), ...(override ? { override } : {}) },
      {
        onSuccess: () => {
          onMoved(successMessage(Boolean(override)));
          onClose();
        },
        onError: (e) => {
          const info = readAppError(e);
          setError(info);
          if (override && info?.fields['override.reason']) setReasonError(info.fields['override.reason']);
          // Refused although overriding (the server saw no override): show why on the move step.
          if (info?.code === 'promotion_blocked') setStage('move');
        },
      },
    );
  }

  function submitOverride() {
    const problem = overrideReasonError(reason);
    setReasonError(problem);
    if (!problem) submit({ reason });
  }

  const close = () => !move.isPending && onClose();
  const message =
    error && error.code !== 'promotion_blocked' && !(stage === 'override' && reasonError)
      ? formMessage(error, fieldNames)
      : null;

  return (
    <Dialog
      open
      onClose={close}
      title={stage === 'override' ? `Override the release policy for ${label}` : title}
      description={description}
      footer={
        stage === 'override' ? (
          <>
            <Button onClick={() => (setStage('move'), setError(null))} disabled={move.isPending}>
              Back
            </Button>
            <Button variant="danger" loading={move.isPending} onClick={submitOverride}>
              Override and move
            </Button>
          </>
        ) : (
          <>
            <Button onClick={close} disabled={move.isPending}>
              Cancel
            </Button>
            {canOverride ? (
              <Button
                variant="danger-outline"
                disabled={move.isPending}
                onClick={() => (setStage('override'), setError(null))}
              >
                Override and move…
              </Button>
            ) : null}
            <span className="button-reason" title={disabledReason ?? undefined}>
              <Button
                variant="primary"
                loading={move.isPending}
                disabled={disabledReason !== null}
                aria-description={disabledReason ?? undefined}
                onClick={() => submit()}
              >
                {submitLabel}
              </Button>
            </span>
          </>
        )
      }
    >
      {stage === 'override' ? (
        <OverrideForm
          label={label}
          reason={reason}
          onChange={(value) => (setReason(value), reasonError && setReasonError(overrideReasonError(value)))}
          error={reasonError}
        />
      ) : (
        <div className="stack-sm move-body">
          {children({ blocked: blocked !== null, error, clearError: () => setError(null) })}
          {blocked ? (
            <BlockedExplanation details={blocked} evalsBase={evalsBase} baselineText={gate.baselineText} />
          ) : null}
          {refusedForSure && !isAdmin ? <p className="subtle">Only an admin can override the release policy.</p> : null}
          {refusedForSure && canOverride ? (
            <p className="subtle">
              To move anyway, choose <strong>Override and move…</strong> and say why: the label history and the audit
              log keep the reason.
            </p>
          ) : null}
        </div>
      )}
      {message ? <Alert tone="error">{message}</Alert> : null}
    </Dialog>
  );
}

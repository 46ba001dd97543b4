'use client';

import Link from 'next/link';
import { formatRelative } from '@/components/format';
import { percent, type Evaluation } from '@/components/evals/types';
import { Field, Select } from '@/components/ui/Field';
import { CheckCircleIcon, AlertCircleIcon, InfoIcon } from '@/components/ui/icons';
import { RefusalLinks } from './BlockedExplanation';
import type { Gate } from './hooks';
import { versionName, type NumberOf } from './rules';

function optionText(evaluation: Evaluation): string {
  const rates = `${percent(evaluation.candidate.passRate)} vs ${percent(evaluation.production?.passRate)}`;
  const when = evaluation.completedAt ? `, ${formatRelative(evaluation.completedAt)}` : '';
  return `v${evaluation.version} vs v${evaluation.productionVersion ?? '?'} · ${rates}${when} · ${evaluation.id}`;
}

// The evaluation that justifies a move, and (for a protected label) whether the release policy would
// accept it, said before anything is sent.
export function GateSection({
  gate,
  label,
  currentText,
  currentIsSplit,
  evaluationId,
  onEvaluationChange,
  numberOf,
  evalsBase,
  blocked,
}: {
  gate: Gate;
  label: string;
  // What the label serves now, e.g. "v2" or "v2 90% · v3 10%".
  currentText: string | null;
  // Whether that is a split (a comparison is then against any one of its versions).
  currentIsSplit: boolean;
  evaluationId: string;
  onEvaluationChange: (id: string) => void;
  numberOf: NumberOf;
  evalsBase: string;
  // The server already answered promotion_blocked: its explanation replaces the forecast.
  blocked: boolean;
}) {
  if (!gate.ready) return null;
  if (gate.on && gate.startsOnProduction)
    return (
      <p className="gate-note gate-ok" role="status">
        <InfoIcon size={14} /> “{label}” starts on what production serves now, so the release policy lets it without an
        evaluation.
      </p>
    );
  if (gate.on && gate.rollback)
    return (
      <p className="gate-note gate-ok" role="status">
        <InfoIcon size={14} /> No evaluation needed: “{label}” serves or has served every version of this move (now, in
        its split or in its history), and the release policy never refuses those.
      </p>
    );
  if (!gate.on && gate.choices.length === 0) return null;

  const names = (gate.on ? gate.newVersionIds : []).map((id) => versionName(numberOf, id)).join(', ');
  const verdict = gate.verdict;
  return (
    <div className="gate">
      {gate.on ? (
        <p className="gate-note">
          <strong>“{label}” is protected.</strong> Moving it to {names} needs a completed comparison of {names} against{' '}
          {currentText === null
            ? 'what it serves now'
            : currentIsSplit
              ? `one of the versions its split serves now (${currentText})`
              : currentText}
          .
        </p>
      ) : null}
      <Field
        label={gate.on ? 'Justifying comparison' : 'Justifying comparison (optional)'}
        hint={
          gate.choices.length === 0 ? (
            <>
              No completed comparison of {names || 'this version'} yet.{' '}
              <Link href={evalsBase}>Run one on the Evaluations page</Link>.
            </>
          ) : gate.on ? (
            'Recorded in the label history with the move.'
          ) : (
            'Recorded in the label history with the move; the release policy does not require one for this move.'
          )
        }
      >
        <Select value={evaluationId} onChange={(e) => onEvaluationChange(e.target.value)}>
          <option value="">{gate.choices.length === 0 ? 'None available' : 'None'}</option>
          {gate.choices.map((evaluation) => (
            <option key={evaluation.id} value={evaluation.id}>
              {optionText(evaluation)}
            </option>
          ))}
        </Select>
      </Field>
      {gate.running.length > 0 ? (
        <p className="subtle">
          Still running:{' '}
          {gate.running.map((evaluation, index) => (
            <span key={evaluation.id}>
              {index > 0 ? ', ' : ''}
              <Link href={`${evalsBase}/${evaluation.id}`}>
                v{evaluation.version} vs v{evaluation.productionVersion}
              </Link>
            </span>
          ))}
          .
        </p>
      ) : null}
      {verdict && !blocked ? (
        verdict.reasons.length > 0 ? (
          <div className="gate-verdict gate-fail" role="status" aria-label="Release policy check">
            <AlertCircleIcon size={14} />
            <div>
              <strong>The release policy will refuse this move</strong>
              <ul>
                {verdict.reasons.map((reason) => (
                  <li key={reason}>{reason}</li>
                ))}
              </ul>
              {evaluationId ? (
                <RefusalLinks
                  caseIds={verdict.regressions ?? []}
                  evaluationHref={`${evalsBase}/${evaluationId}`}
                  evaluationId={evaluationId}
                />
              ) : null}
              {gate.historyComplete ? null : (
                <p className="subtle">
                  Unless “{label}” served {names} before the moves the dashboard read: its history is longer, so the
                  server decides when you move.
                </p>
              )}
            </div>
          </div>
        ) : verdict.counting ? (
          <p className="gate-verdict" role="status" aria-label="Release policy check">
            {gate.countFailed ? (
              <>
                <InfoIcon size={14} /> Pass rates are within the policy. The regressions could not be read here: the
                server counts them when you move.
              </>
            ) : (
              <>
                <span className="spinner" aria-hidden="true" /> Pass rates are within the policy; counting regressions…
              </>
            )}
          </p>
        ) : (
          <p className="gate-verdict gate-pass" role="status" aria-label="Release policy check">
            <CheckCircleIcon size={14} /> Meets the release policy: {verdict.regressions?.length ?? 0}{' '}
            {verdict.regressions?.length === 1 ? 'regression' : 'regressions'}, pass rates within the allowed drop.
          </p>
        )
      ) : null}
    </div>
  );
}

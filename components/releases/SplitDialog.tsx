'use client';

import { useMemo, useState } from 'react';
import type { Label } from '@/components/evals/types';
import { Button } from '@/components/ui/Button';
import { FieldError } from '@/components/ui/FieldError';
import { Input } from '@/components/ui/Field';
import type { VersionChoice } from '@/components/versions/choices';
import { useVersionChoices } from '@/components/versions/hooks';
import { VersionPicker } from '@/components/versions/VersionPicker';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import { TrashIcon } from '@/components/ui/icons';
import { splitLimits } from '@/server/prompts/schemas';
import { GatedMoveDialog } from './GatedMoveDialog';
import { GateSection } from './GateSection';
import { useGate, type Target } from './hooks';
import { servesText } from './MoveLabelDialog';
import { checkSplit, sameSplit, type NumberOf, type SplitRow } from './rules';
import { splitCurlSnippet, splitTypescriptSnippet } from './snippets';

// Each carries white "v2 10%" text: all reach 4.5:1.
const swatches = ['var(--accent)', '#0369a1', '#b45309', '#047857'];

function initialRows(current: Label, versions: VersionChoice[]): SplitRow[] {
  if (current.split)
    return current.split.map((entry) => ({ versionId: entry.versionId, weight: String(entry.weight) }));
  const other = versions.find((version) => version.id !== current.versionId);
  return [
    { versionId: current.versionId, weight: '90' },
    { versionId: other?.id ?? '', weight: '10' },
  ];
}

/** Integer weights as equal as they can be, summing to 100 (the first ones get the remainder). */
function evenWeights(count: number): string[] {
  const base = Math.floor(splitLimits.totalWeight / count);
  const extra = splitLimits.totalWeight - base * count;
  return Array.from({ length: count }, (_, i) => String(base + (i < extra ? 1 : 0)));
}

// Splits a label's traffic between 2–4 versions with integer weights summing to 100, shown live as a
// bar; retrieval keeps each subject on one version while the split is unchanged.
export function SplitDialog({
  target,
  label,
  numberOf,
  isAdmin,
  evalsBase,
  subject,
  onClose,
  onMoved,
}: {
  target: Target;
  label: Label;
  numberOf: NumberOf;
  isAdmin: boolean;
  evalsBase: string;
  // The signed-in user's id, as an example subject.
  subject: string;
  onClose: () => void;
  onMoved: (message: string) => void;
}) {
  // The versions loaded for the pickers (newest first); each row's picker reaches the older ones.
  const choices = useVersionChoices(target);
  const versions = choices.versions;
  const [rows, setRows] = useState<SplitRow[]>(() => initialRows(label, versions));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  // Anything changed: the total's error shows live from then on.
  const [dirty, setDirty] = useState(false);
  // The user's justifying comparison ('' for none); null until they choose, so the gate takes the
  // one that justifies the move (see useGate).
  const [evaluationId, setEvaluationId] = useState<string | null>(null);
  const check = checkSplit(rows);
  const versionIds = rows.map((row) => row.versionId).filter(Boolean);
  const gate = useGate(target, { label: label.label, current: label, versionIds, evaluationId, numberOf });
  const unchanged = check.split !== null && sameSplit(label.split, check.split);
  const shown = (key: string) => submitted || touched.has(key);
  const touch = (key: string) => setTouched((current) => new Set(current).add(key));

  const snippets = useMemo(() => {
    const origin = typeof window === 'undefined' ? '' : window.location.origin;
    return [
      {
        id: 'curl',
        tab: 'curl',
        label: 'curl example',
        copyLabel: 'Copy command',
        code: splitCurlSnippet(origin, target.promptId, label.label, subject),
      },
      {
        id: 'typescript',
        tab: 'TypeScript',
        label: 'TypeScript example',
        copyLabel: 'Copy code',
        code: splitTypescriptSnippet(origin, target.promptId, label.label, subject),
      },
    ];
  }, [target.promptId, label.label, subject]);

  function update(index: number, patch: Partial<SplitRow>) {
    setRows((current) => current.map((row, i) => (i === index ? { ...row, ...patch } : row)));
    setDirty(true);
  }

  function addRow() {
    const unused = versions.find((version) => !rows.some((row) => row.versionId === version.id));
    setRows((current) => [...current, { versionId: unused?.id ?? '', weight: '' }]);
    setDirty(true);
  }

  const name = (id: string) => {
    const number = numberOf(id);
    return number === undefined ? 'a version' : `v${number}`;
  };
  const preview = check.split ? check.split.map((e) => `${name(e.versionId)} ${e.weight}%`).join(' · ') : null;

  return (
    <GatedMoveDialog
      target={target}
      label={label.label}
      gate={gate}
      isAdmin={isAdmin}
      evalsBase={evalsBase}
      title={label.split ? `Change the ${label.label} split` : `Split ${label.label} traffic`}
      description={
        <>
          <code>{label.label}</code> serves <strong>{servesText(label, numberOf)}</strong> now. Each request gets one of
          these versions, in proportion to its weight.
        </>
      }
      submitLabel={label.split ? 'Save split' : 'Split traffic'}
      submitDisabled={unchanged ? `${label.label} already splits its traffic exactly like this.` : null}
      overridable={!unchanged}
      body={() => {
        setSubmitted(true);
        return check.split ? { split: check.split } : null;
      }}
      fieldNames={['split']}
      evaluationId={gate.evaluationId}
      successMessage={(overridden) =>
        `${label.label} now splits its traffic: ${preview}${overridden ? ' (release policy overridden)' : ''}.`
      }
      onClose={onClose}
      onMoved={onMoved}
    >
      {({ blocked, error, clearError }) => (
        <>
          <fieldset className="traffic-rows">
            <legend className="field-label">Versions and weights</legend>
            {rows.map((row, index) => {
              const errors = check.rowErrors[index];
              const versionError = shown(`v${index}`) ? errors.versionId : undefined;
              const weightError = shown(`w${index}`) ? errors.weight : undefined;
              return (
                <div className="traffic-row" key={index} data-split-row={index + 1}>
                  <span className="traffic-swatch" style={{ background: swatches[index] }} aria-hidden="true" />
                  <div className="traffic-row-version">
                    <VersionPicker
                      target={target}
                      compact
                      aria-label={`Version ${index + 1}`}
                      numberLabel={`Version number of row ${index + 1}`}
                      value={row.versionId}
                      selectedNumber={row.versionId ? numberOf(row.versionId) : undefined}
                      aria-invalid={versionError ? true : undefined}
                      aria-describedby={versionError ? `split-version-${index}-error` : undefined}
                      onChange={(version) => (
                        update(index, { versionId: version.id }),
                        touch(`v${index}`),
                        clearError()
                      )}
                    />
                    <FieldError id={`split-version-${index}-error`} message={versionError} />
                  </div>
                  <div className="traffic-row-weight">
                    <input
                      type="range"
                      min={1}
                      max={99}
                      value={Number(row.weight) || 1}
                      aria-label={`Weight slider of version ${index + 1}`}
                      onChange={(e) => (update(index, { weight: e.target.value }), touch(`w${index}`), clearError())}
                    />
                    <div className="traffic-weight-input">
                      <Input
                        inputMode="numeric"
                        aria-label={`Weight of version ${index + 1} (%)`}
                        value={row.weight}
                        aria-invalid={weightError ? true : undefined}
                        aria-describedby={weightError ? `split-weight-${index}-error` : undefined}
                        onChange={(e) => (update(index, { weight: e.target.value }), clearError())}
                        onBlur={() => touch(`w${index}`)}
                      />
                      <span aria-hidden="true">%</span>
                    </div>
                    <FieldError id={`split-weight-${index}-error`} message={weightError} />
                  </div>
                  <Button
                    size="sm"
                    variant="ghost"
                    className="traffic-remove"
                    icon={<TrashIcon size={14} />}
                    disabled={rows.length <= splitLimits.minVersions}
                    title={rows.length <= splitLimits.minVersions ? 'A split has at least 2 versions.' : undefined}
                    aria-label={`Remove version ${index + 1}`}
                    onClick={() => (
                      setRows((current) => current.filter((_, i) => i !== index)),
                      setDirty(true),
                      clearError()
                    )}
                  />
                </div>
              );
            })}
          </fieldset>
          <div className="traffic-bar" aria-hidden="true">
            {rows.map((row, index) => {
              const weight = Number(row.weight);
              return Number.isInteger(weight) && weight > 0 ? (
                <span key={index} style={{ flexGrow: weight, background: swatches[index] }}>
                  {weight >= 8 ? `${name(row.versionId)} ${weight}%` : ''}
                </span>
              ) : null;
            })}
            {check.total < splitLimits.totalWeight ? (
              <span className="traffic-bar-rest" style={{ flexGrow: splitLimits.totalWeight - check.total }} />
            ) : null}
          </div>
          <div className="traffic-total">
            <p
              role="status"
              className={check.total === splitLimits.totalWeight ? 'traffic-total-ok' : 'traffic-total-off'}
            >
              Total: <strong>{check.total}%</strong> of {splitLimits.totalWeight}%
            </p>
            <div className="inline">
              <Button
                size="sm"
                variant="ghost"
                onClick={() => {
                  setRows((current) => current.map((row, i) => ({ ...row, weight: evenWeights(current.length)[i] })));
                  setDirty(true);
                  clearError();
                }}
              >
                Even split
              </Button>
              <Button
                size="sm"
                onClick={() => (addRow(), clearError())}
                disabled={
                  rows.length >= splitLimits.maxVersions || (!choices.hasOlder && rows.length >= versions.length)
                }
              >
                Add version
              </Button>
            </div>
          </div>
          <FieldError
            id="split-total-error"
            message={(submitted || dirty ? check.totalError : null) ?? error?.fields.split}
          />
          <GateSection
            gate={gate}
            label={label.label}
            currentText={servesText(label, numberOf)}
            currentIsSplit={Boolean(label.split)}
            evaluationId={gate.evaluationId}
            onEvaluationChange={(id) => (setEvaluationId(id), clearError())}
            numberOf={numberOf}
            evalsBase={evalsBase}
            blocked={blocked}
          />
          <details className="traffic-snippet">
            <summary>How applications get a version (sticky per subject)</summary>
            <p className="subtle">
              Send a stable id of your end user as <code>Promptloop-Subject</code> (or <code>subject</code> in the SDK):
              the same subject gets the same version for as long as this split is unchanged, so a user never flips
              between versions mid-conversation. Without a subject each request draws by weight. Changing the split
              gives it a new id and reshuffles subjects. The examples use your user id.
            </p>
            <SnippetTabs title={`Retrieve ${label.label} with a subject`} snippets={snippets} />
          </details>
        </>
      )}
    </GatedMoveDialog>
  );
}

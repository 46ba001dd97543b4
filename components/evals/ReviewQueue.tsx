'use client';

import { useMutation } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { FieldError } from '@/components/ui/FieldError';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { EvalResult, ReviewDecision } from './types';

type Props = {
  organizationId: string;
  evaluationId: string;
  items: EvalResult[];
  canWrite: boolean;
  onReviewed: () => void;
};

const shortcuts: { key: string; label: string }[] = [
  { key: 'j / k', label: 'next / previous' },
  { key: 'a', label: 'accept generated' },
  { key: 'c', label: 'mark correct' },
  { key: 'x', label: 'mark incorrect' },
  { key: 'e', label: 'edit correction' },
];

const shortcutsSetting = 'promptloop.review-shortcuts';

function typingInto(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

// Results waiting for a person: one at a time, decided with a click or a single key.
export function ReviewQueue({ organizationId, evaluationId, items, canWrite, onReviewed }: Props) {
  const trpc = useTRPC();
  const [index, setIndex] = useState(0);
  const [editing, setEditing] = useState(false);
  const [correction, setCorrection] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [done, setDone] = useState(0);
  const correctionRef = useRef<HTMLTextAreaElement>(null);
  const itemRef = useRef<HTMLDivElement>(null);
  // Single-key shortcuts can be turned off (WCAG 2.1.4); the choice is kept for this browser.
  const [shortcutsOn, setShortcutsOn] = useState(true);
  useEffect(() => {
    if (window.localStorage.getItem(shortcutsSetting) === 'off') setShortcutsOn(false);
  }, []);
  const toggleShortcuts = (on: boolean) => {
    setShortcutsOn(on);
    window.localStorage.setItem(shortcutsSetting, on ? 'on' : 'off');
  };
  // The case shown next is where the keyboard user continues (its buttons may be gone or disabled).
  const focusItem = useCallback(() => requestAnimationFrame(() => itemRef.current?.focus()), []);
  const current = items[Math.min(index, items.length - 1)] as EvalResult | undefined;

  useEffect(() => {
    if (index > 0 && index >= items.length) setIndex(Math.max(0, items.length - 1));
  }, [index, items.length]);

  const review = useMutation(
    trpc.evals.review.mutationOptions({
      onSuccess: () => {
        setDone((n) => n + 1);
        setEditing(false);
        setError(null);
        setFieldError(null);
        focusItem();
        onReviewed();
      },
      onError: (e) => {
        const info = readAppError(e);
        const correctionIssue = info
          ? Object.entries(info.fields).find(([path]) => path.includes('correctedOutput'))?.[1]
          : undefined;
        if (correctionIssue) setFieldError(correctionIssue);
        else setError(info?.message ?? 'The decision was not saved.');
      },
    }),
  );

  const decide = useCallback(
    (decision: ReviewDecision) => {
      if (!current || review.isPending || !canWrite) return;
      if (decision === 'accept_corrected' && correction.trim() === '') {
        setFieldError('Write the corrected output, or accept the generated one.');
        return;
      }
      setError(null);
      setFieldError(null);
      review.mutate({
        organizationId,
        evaluationId,
        reviews: [
          {
            resultId: current.id,
            decision,
            ...(decision === 'accept_corrected' ? { correctedOutput: correction } : {}),
          },
        ],
      });
    },
    [current, review, canWrite, correction, organizationId, evaluationId],
  );

  const startEditing = useCallback(() => {
    if (!current) return;
    setCorrection(current.output ?? '');
    setEditing(true);
    setFieldError(null);
    // The generated output is there to edit, selected: typing replaces it, never lands in front of it.
    requestAnimationFrame(() => {
      correctionRef.current?.focus();
      correctionRef.current?.select();
    });
  }, [current]);

  // Keys act only while focus is inside this queue, so a stray key elsewhere on the page never
  // records a decision.
  function onQueueKeyDown(event: KeyboardEvent<HTMLElement>) {
    if (!shortcutsOn || event.metaKey || event.ctrlKey || event.altKey || typingInto(event.target)) return;
    const actions: Record<string, () => void> = {
      j: () => (setIndex((i) => Math.min(i + 1, items.length - 1)), focusItem()),
      k: () => (setIndex((i) => Math.max(i - 1, 0)), focusItem()),
      a: () => decide('accept_generated'),
      c: () => decide('mark_correct'),
      x: () => decide('mark_incorrect'),
      e: startEditing,
    };
    const action = actions[event.key.toLowerCase()];
    if (!action) return;
    event.preventDefault();
    action();
  }

  const stopEditing = () => {
    setEditing(false);
    focusItem();
  };

  useEffect(() => {
    setEditing(false);
    setFieldError(null);
  }, [current?.id]);

  if (!current) return null;

  return (
    <Card className="review-queue" aria-label="Review queue" onKeyDown={onQueueKeyDown}>
      <CardHeader
        title={
          <>
            Review queue <Badge tone="warning">{items.length} waiting</Badge>
          </>
        }
        description={
          done > 0
            ? `${done} decided in this session. The evaluation updates as you go.`
            : canWrite
              ? shortcutsOn
                ? 'These outputs need a person to decide. Keyboard shortcuts work while focus is in this queue.'
                : 'These outputs need a person to decide.'
              : 'These outputs need a person to decide.'
        }
        actions={
          <div className="inline">
            <Button
              size="sm"
              onClick={() => setIndex((i) => Math.max(i - 1, 0))}
              disabled={index === 0}
              aria-keyshortcuts={shortcutsOn ? 'k' : undefined}
            >
              Previous
            </Button>
            <span className="muted" aria-live="polite">
              {Math.min(index, items.length - 1) + 1} of {items.length}
            </span>
            <Button
              size="sm"
              onClick={() => setIndex((i) => Math.min(i + 1, items.length - 1))}
              disabled={index >= items.length - 1}
              aria-keyshortcuts={shortcutsOn ? 'j' : undefined}
            >
              Next
            </Button>
          </div>
        }
      />
      <CardBody className="stack">
        {error ? <Alert tone="error">{error}</Alert> : null}
        <div
          className="review-item"
          data-result={current.id}
          ref={itemRef}
          tabIndex={-1}
          role="group"
          aria-label={`Case #${current.position}`}
        >
          <div className="inline">
            <span className="mono">Case #{current.position}</span>
            <Badge>{current.side === 'candidate' ? 'Candidate' : 'Production'}</Badge>
          </div>
          <div className="review-grid">
            <div className="stack-xs">
              <span className="field-label">Input</span>
              <pre className="output-block">{current.input}</pre>
            </div>
            <div className="stack-xs">
              <span className="field-label">Expected output</span>
              <pre className="output-block">
                {current.expectedOutput || <span className="subtle">None yet: your decision sets it.</span>}
              </pre>
            </div>
            <div className="stack-xs review-output">
              <span className="field-label">Generated output</span>
              <pre className="output-block">{current.output ?? <span className="subtle">No output</span>}</pre>
            </div>
          </div>
          {current.judgeReasoning ? (
            <div className="stack-xs">
              <span className="field-label">Judge reasoning</span>
              <p className="judge-reasoning">{current.judgeReasoning}</p>
            </div>
          ) : null}
          {editing ? (
            <div className="stack-sm">
              <label className="field-label" htmlFor="review-correction">
                Corrected output
              </label>
              <textarea
                id="review-correction"
                ref={correctionRef}
                className="textarea mono"
                rows={5}
                value={correction}
                aria-invalid={fieldError ? true : undefined}
                aria-describedby={fieldError ? 'review-correction-error' : undefined}
                onChange={(e) => setCorrection(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) decide('accept_corrected');
                  if (e.key === 'Escape') stopEditing();
                }}
              />
              <FieldError id="review-correction-error" message={fieldError} />
              <div className="inline">
                <Button
                  variant="primary"
                  size="sm"
                  loading={review.isPending}
                  onClick={() => decide('accept_corrected')}
                >
                  Save correction
                </Button>
                <Button size="sm" variant="ghost" onClick={stopEditing}>
                  Cancel
                </Button>
                <span className="subtle">
                  Ctrl+Enter saves, Esc cancels. The correction becomes this case’s expected output.
                </span>
              </div>
            </div>
          ) : canWrite ? (
            <div className="review-actions">
              <Button
                variant="primary"
                size="sm"
                onClick={() => decide('accept_generated')}
                loading={review.isPending}
                aria-keyshortcuts={shortcutsOn ? 'a' : undefined}
              >
                Accept generated {shortcutsOn ? <kbd>a</kbd> : null}
              </Button>
              <Button
                size="sm"
                onClick={() => decide('mark_correct')}
                disabled={review.isPending}
                aria-keyshortcuts={shortcutsOn ? 'c' : undefined}
              >
                Mark correct {shortcutsOn ? <kbd>c</kbd> : null}
              </Button>
              <Button
                size="sm"
                onClick={() => decide('mark_incorrect')}
                disabled={review.isPending}
                aria-keyshortcuts={shortcutsOn ? 'x' : undefined}
              >
                Mark incorrect {shortcutsOn ? <kbd>x</kbd> : null}
              </Button>
              <Button
                size="sm"
                variant="ghost"
                onClick={startEditing}
                disabled={review.isPending}
                aria-keyshortcuts={shortcutsOn ? 'e' : undefined}
              >
                Edit correction {shortcutsOn ? <kbd>e</kbd> : null}
              </Button>
            </div>
          ) : (
            <p className="muted">Editors and admins can review results.</p>
          )}
        </div>
        {canWrite ? (
          <div className="stack-xs">
            <label className="check-row">
              <input type="checkbox" checked={shortcutsOn} onChange={(e) => toggleShortcuts(e.target.checked)} />
              <span>Single-key shortcuts</span>
            </label>
            {shortcutsOn ? (
              <p className="shortcut-help subtle" aria-label="Keyboard shortcuts">
                {shortcuts.map((shortcut) => (
                  <span key={shortcut.key}>
                    <kbd>{shortcut.key}</kbd> {shortcut.label}
                  </span>
                ))}
              </p>
            ) : null}
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}

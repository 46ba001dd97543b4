'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { Field, Select } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { CheckIcon } from '@/components/ui/icons';
import { useTRPC, useTRPCClient } from '@/lib/trpc/client';
import { readAppError, type AppErrorInfo } from '@/lib/trpc/errors';
import type { PromptScope } from '@/components/prompts/PromptShell';
import type { DraftContent } from '@/components/prompts/types';
import { InitializeBaselineDialog } from './InitializeBaselineDialog';
import { EvalStatusBadge } from './parts';
import { isActive, type Estimate, type Evaluation, type ScoringMethod } from './types';
import './evals.css';

const localJudge = 'local/judge';

const methods: { value: ScoringMethod; title: string; text: string }[] = [
  {
    value: 'expected',
    title: 'Expected output',
    text: 'Pass when the output matches the case’s expected output (whitespace-insensitive; JSON compared as data).',
  },
  { value: 'judge', title: 'Model judge', text: 'A model grades each output against your rubric and explains why.' },
  {
    value: 'review',
    title: 'Human review',
    text: 'You decide each output in a review queue, with keyboard shortcuts.',
  },
];

type Props = {
  scope: PromptScope;
  content: DraftContent;
  revision: number;
  // True when the stored draft equals what the editor shows (no pending or invalid edits).
  saved: boolean;
  contentValid: boolean;
};

// "…on 10 cases: 8 credits, 112 left this period." from the server's estimate (the first cases of
// the dataset; a case that cannot run under the input type is not charged).
function runText(revision: number, estimate: Estimate | undefined): string {
  if (!estimate) return `Runs revision ${revision} of your draft on the first cases of the dataset.`;
  const { totalCases: cases, credits, creditsRemaining: remaining } = estimate;
  const run = `Runs revision ${revision} of your draft on ${cases.toLocaleString()} ${cases === 1 ? 'case' : 'cases'}`;
  const cost = `${credits.toLocaleString()} ${credits === 1 ? 'credit' : 'credits'}`;
  if (remaining < credits)
    return `${run}: ${cost}, and ${remaining.toLocaleString()} are left this period, so it pauses when they run out.`;
  return `${run}: ${cost}, ${remaining.toLocaleString()} left this period.`;
}

function Step({ n, done, title, children }: { n: number; done: boolean; title: string; children?: React.ReactNode }) {
  return (
    <li className="setup-step" data-done={done || undefined}>
      <span className="setup-mark" aria-hidden="true">
        {done ? <CheckIcon size={14} /> : n}
      </span>
      <div className="setup-step-body">
        <p className="setup-step-title">
          {title}
          <span className="visually-hidden">{done ? ' (done)' : ' (to do)'}</span>
        </p>
        {children}
      </div>
    </li>
  );
}

// The path from an empty setup prompt to a published version 1: draft, cases, scoring, initialize.
export function SetupChecklist({ scope, content, revision, saved, contentValid }: Props) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const router = useRouter();
  const queryClient = useQueryClient();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const base = `/organizations/${scope.organizationId}/prompts/${scope.promptId}`;
  const dataset = useQuery(trpc.datasets.get.queryOptions(target));
  const scoring = useQuery(trpc.versions.getScoring.queryOptions(target));
  const models = useQuery(trpc.models.list.queryOptions({ organizationId: scope.organizationId }));
  const evaluations = useQuery({
    ...trpc.evals.list.queryOptions({ ...target, limit: 5 }),
    refetchInterval: (q) =>
      (q.state.data?.items ?? []).some((item: Evaluation) => isActive(item.status)) ? 2_000 : false,
  });
  const [method, setMethod] = useState<ScoringMethod>('expected');
  const [rubric, setRubric] = useState('');
  const [judgeRoute, setJudgeRoute] = useState(localJudge);
  const [error, setError] = useState<AppErrorInfo | null>(null);
  // The preview of what the baseline runs and costs, confirmed before anything starts.
  const [confirming, setConfirming] = useState(false);

  // Start from the stored policy once it loads.
  const stored = scoring.data;
  useEffect(() => {
    if (!stored) return;
    setMethod(stored.method);
    if (stored.rubric && !stored.rubricIsDefault) setRubric(stored.rubric);
    if (stored.judgeModelRouteId) setJudgeRoute(stored.judgeModelRouteId);
  }, [stored]);

  const setScoring = useMutation(trpc.versions.setScoring.mutationOptions());
  const initialize = useMutation(trpc.evals.initialize.mutationOptions());
  const pending = setScoring.isPending || initialize.isPending;

  const messages = content.messages.filter((message) => message.content.trim() !== '').length;
  const count = dataset.data?.count ?? 0;
  const casesWithoutExpected = (dataset.data?.rows ?? []).filter((row) => row.expectedOutput.trim() === '').length;
  const draftDone = messages > 0 && contentValid;
  const casesDone = count > 0;
  const baseline = (evaluations.data?.items ?? []).find((item: Evaluation) => item.kind === 'baseline') as
    Evaluation | undefined;
  const baselineRunning = baseline ? isActive(baseline.status) || baseline.status === 'paused' : false;
  const ready = draftDone && casesDone && saved && !baselineRunning && scope.canWrite;
  // What the baseline runs and costs now, as the confirmation dialog shows it; asked again when the
  // draft, the dataset or the scoring choice changes.
  const estimateInput = {
    ...target,
    scoringMethod: method,
    ...(method === 'judge' ? { judgeModelRouteId: judgeRoute } : {}),
  };
  const estimate = useQuery({
    queryKey: ['baseline-estimate', estimateInput, revision, dataset.data?.revision],
    queryFn: () => client.evals.estimateBaseline.query(estimateInput),
    enabled: ready,
    placeholderData: (previous) => previous,
  });

  async function start() {
    setError(null);
    try {
      if (method === 'judge') {
        await setScoring.mutateAsync({
          ...target,
          method,
          judgeModelRouteId: judgeRoute,
          ...(rubric.trim() ? { rubric: rubric.trim() } : {}),
        });
      } else if (stored?.method !== method) {
        await setScoring.mutateAsync({ ...target, method });
      }
      const evaluation = await initialize.mutateAsync({ ...target, draftRevision: revision, scoringMethod: method });
      void queryClient.invalidateQueries(trpc.evals.pathFilter());
      router.push(`${base}/evals/${evaluation.id}`);
    } catch (e) {
      setConfirming(false);
      setError(readAppError(e));
    }
  }

  const routes = models.data?.items ?? [];
  const judgeOptions = routes.some((route) => route.id === localJudge)
    ? routes
    : [{ id: localJudge, name: 'Local deterministic judge', available: true }, ...routes];
  const fieldNames = ['rubric', 'judgeModelRouteId', 'scoringMethod', 'method'];
  const topError = error && !fieldNames.some((name) => error.fields[name]) ? error.message : null;

  return (
    <Card className="setup-card" aria-labelledby="setup-title">
      <CardHeader
        titleId="setup-title"
        title="Set up this prompt"
        description="Four steps to version 1. The baseline evaluation runs your draft on every test case; when every case is scored, version 1 is published to production and staging."
      />
      <CardBody>
        <ol className="setup-steps">
          <Step n={1} done={draftDone} title="Write the draft">
            <p className="muted">
              {messages === 0
                ? 'Add at least one message below: the system message tells the model what to do.'
                : `${messages} ${messages === 1 ? 'message' : 'messages'}${contentValid ? '' : ' · fix the highlighted fields'}.`}
            </p>
          </Step>
          <Step n={2} done={casesDone} title="Add test cases">
            <p className="muted">
              {dataset.isPending
                ? 'Loading the dataset… '
                : count === 0
                  ? 'No cases yet. '
                  : `${count} ${count === 1 ? 'case' : 'cases'} in the dataset. `}
              <Link href={`${base}/dataset`}>{count === 0 ? 'Add cases' : 'Open the dataset'}</Link>
            </p>
            {method === 'expected' && casesWithoutExpected > 0 ? (
              <p className="field-hint">
                {casesWithoutExpected} {casesWithoutExpected === 1 ? 'case has' : 'cases have'} no expected output:
                expected-output scoring will send {casesWithoutExpected === 1 ? 'it' : 'them'} to review.
              </p>
            ) : null}
          </Step>
          <Step n={3} done={Boolean(stored) && draftDone && casesDone} title="Choose how outputs are scored">
            <div className="choices choices-3" role="radiogroup" aria-label="Scoring method">
              {methods.map((option) => (
                <label key={option.value} className="choice" data-checked={method === option.value || undefined}>
                  <input
                    type="radio"
                    name="scoringMethod"
                    value={option.value}
                    checked={method === option.value}
                    disabled={!scope.canWrite}
                    onChange={() => setMethod(option.value)}
                  />
                  <span className="choice-title">{option.title}</span>
                  <span className="choice-text">{option.text}</span>
                </label>
              ))}
            </div>
            <FieldError message={error?.fields.scoringMethod ?? error?.fields.method} />
            {method === 'judge' ? (
              <div className="judge-settings">
                <Field label="Judge model" error={error?.fields.judgeModelRouteId}>
                  <Select value={judgeRoute} onChange={(e) => setJudgeRoute(e.target.value)} disabled={!scope.canWrite}>
                    {judgeOptions.map((route) => (
                      <option key={route.id} value={route.id} disabled={!route.available}>
                        {route.name}
                      </option>
                    ))}
                  </Select>
                </Field>
                <Field
                  label="Rubric"
                  error={error?.fields.rubric}
                  hint={
                    !rubric.trim()
                      ? 'Empty uses the built-in rubric: same answer as the expected output, or a correct, complete answer when there is none.'
                      : 'What a passing output must do.'
                  }
                >
                  <textarea
                    className="textarea"
                    rows={4}
                    value={rubric}
                    onChange={(e) => setRubric(e.target.value)}
                    readOnly={!scope.canWrite}
                    placeholder="Pass when the reply answers the question politely and names the order number."
                  />
                </Field>
              </div>
            ) : null}
          </Step>
          <Step
            n={4}
            done={baseline?.status === 'completed' && baseline.version !== null}
            title="Initialize the baseline"
          >
            {baseline ? (
              <p className="inline">
                <span className="muted">Latest baseline:</span>{' '}
                <EvalStatusBadge status={baseline.status} pendingReview={baseline.pendingReviewCases} />
                <Link href={`${base}/evals/${baseline.id}`}>{baselineRunning ? 'View progress' : 'View results'}</Link>
              </p>
            ) : null}
            {topError ? <Alert tone="error">{topError}</Alert> : null}
            <div className="inline">
              <Button variant="primary" disabled={!ready} loading={pending} onClick={() => setConfirming(true)}>
                {baseline && !baselineRunning ? 'Initialize again' : 'Initialize baseline'}
              </Button>
              <span className="subtle">
                {!scope.canWrite
                  ? 'Editors and admins can initialize.'
                  : !draftDone
                    ? 'Write the draft first.'
                    : !casesDone
                      ? 'Add at least one test case first.'
                      : !saved
                        ? 'Saving your draft…'
                        : baselineRunning
                          ? 'A baseline is already running.'
                          : runText(revision, estimate.data)}
              </span>
            </div>
          </Step>
        </ol>
        <InitializeBaselineDialog
          open={confirming && ready}
          onClose={() => setConfirming(false)}
          onConfirm={() => void start()}
          scope={scope}
          revision={revision}
          method={method}
          judgeRoute={judgeRoute}
          pending={pending}
        />
        {baselineRunning && baseline ? (
          <div className="setup-footer">
            <ButtonLink href={`${base}/evals/${baseline.id}`} size="sm">
              Open the running baseline
            </ButtonLink>
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}

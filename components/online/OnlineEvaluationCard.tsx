'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useMemo, useState, type FormEvent } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { usePeople } from '@/components/evals/parts';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Input, Select } from '@/components/ui/Field';
import { FieldError } from '@/components/ui/FieldError';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SkeletonRows } from '@/components/ui/States';
import { ActivityIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { initialForm, rubricHintText, toInput, type OnlineForm } from './settings';
import './online.css';

const localJudge = { id: 'local/judge', name: 'Local deterministic judge', available: true };
const fieldNames = ['enabled', 'sampleRate', 'judgeModelRouteId', 'rubric'];

// Online evaluation of the prompt's production spans: editors change it, everyone else reads it.
export function OnlineEvaluationCard({ scope }: { scope: PromptScope }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const config = useQuery(trpc.online.get.queryOptions(target));
  const scoring = useQuery(trpc.versions.getScoring.queryOptions(target));
  const models = useQuery(trpc.models.list.queryOptions({ organizationId: scope.organizationId }));
  const person = usePeople(scope.organizationId);
  const rubricId = useId();
  const [edits, setEdits] = useState<Partial<OnlineForm>>({});
  const [rateError, setRateError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const save = useMutation(
    trpc.online.set.mutationOptions({
      onSuccess: async (updated) => {
        queryClient.setQueryData(trpc.online.get.queryKey(target), updated);
        setEdits({});
        setSaved(true);
        await queryClient.invalidateQueries(trpc.online.pathFilter());
      },
    }),
  );

  const stored = config.data;
  // The local echo repeats its input and never answers a verdict: the server refuses it as a judge.
  const routeList = models.data?.items.filter((route) => route.id !== 'local/echo');
  const initial = useMemo(
    () =>
      stored
        ? initialForm(stored, scoring.data, routeList?.find((route) => route.available)?.id ?? localJudge.id)
        : null,
    [stored, scoring.data, routeList],
  );
  const routes = routeList ?? [];
  const canEdit = scope.canWrite;
  const loading = config.isPending || scoring.isPending;

  if (loading) {
    return (
      <Card aria-labelledby="online-evaluation-title">
        <CardHeader titleId="online-evaluation-title" title="Online evaluation" />
        <CardBody>
          <SkeletonRows rows={3} label="Loading online evaluation" />
        </CardBody>
      </Card>
    );
  }
  if (config.isError || !initial || !stored) {
    return (
      <Card aria-labelledby="online-evaluation-title">
        <CardHeader titleId="online-evaluation-title" title="Online evaluation" />
        <QueryErrorState title="Could not load online evaluation" query={config} />
      </Card>
    );
  }

  const values: OnlineForm = { ...initial, ...edits };
  const dirty = (Object.keys(edits) as (keyof OnlineForm)[]).some((key) => edits[key] !== initial[key]);
  const error = readAppError(save.error);
  const topError = formMessage(error, fieldNames);
  const judgeOptions = [
    ...(routes.some((route) => route.id === localJudge.id) ? [] : [localJudge]),
    ...routes,
    ...(values.judgeModelRouteId &&
    values.judgeModelRouteId !== localJudge.id &&
    !routes.some((route) => route.id === values.judgeModelRouteId)
      ? [{ id: values.judgeModelRouteId, name: `${values.judgeModelRouteId} (not configured)`, available: false }]
      : []),
  ];
  const set = (patch: Partial<OnlineForm>) => {
    setEdits((current) => ({ ...current, ...patch }));
    setSaved(false);
    if (save.error) save.reset();
  };

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const checked = toInput(values);
    if ('error' in checked) {
      setRateError(checked.error.samplePercent);
      return;
    }
    setRateError(null);
    save.mutate({ ...target, ...checked.input });
  }

  const rubricError = error?.fields.rubric;
  const rubricHint = rubricHintText(stored.rubric, scoring.data?.rubric ?? null);

  return (
    <Card id="online-evaluation" aria-labelledby="online-evaluation-title">
      <form onSubmit={onSubmit} noValidate>
        <CardHeader
          titleId="online-evaluation-title"
          title={
            <span className="inline">
              <ActivityIcon size={15} /> Online evaluation
              {stored.paused ? (
                <Badge tone="warning">Paused</Badge>
              ) : stored.enabled ? (
                <Badge tone="success">On</Badge>
              ) : (
                <Badge>Off</Badge>
              )}
            </span>
          }
          description="Scores a sample of this prompt’s production model spans with a judge, after ingestion has answered. One evaluation credit per scored span."
        />
        <CardBody className="form">
          {stored.paused ? (
            <Alert
              tone="warning"
              title="Scoring is paused: no evaluation credits left"
              action={
                <ButtonLink size="sm" href={`/organizations/${scope.organizationId}/billing`}>
                  Go to billing
                </ButtonLink>
              }
            >
              Spans are still sampled and wait. Scoring resumes by itself at the start of the next billing period, or as
              soon as the organization upgrades, and scores the waiting spans first.
            </Alert>
          ) : null}
          {saved ? (
            <Alert tone="success">
              Saved.{' '}
              {values.enabled
                ? stored.paused
                  ? 'Spans ingested from now on are sampled; they are scored once credits are back.'
                  : 'Spans ingested from now on are sampled and scored.'
                : 'No spans are scored while it is off; spans ingested meanwhile are never scored later.'}
            </Alert>
          ) : null}
          {topError ? <Alert tone="error">{topError}</Alert> : null}
          <label className="online-switch">
            <input
              type="checkbox"
              role="switch"
              checked={values.enabled}
              disabled={!canEdit}
              onChange={(e) => set({ enabled: e.target.checked })}
            />
            <span>
              <strong>Score production spans</strong>
              <span className="field-hint">
                Model spans tagged with a version of this prompt and carrying both their input and output.
              </span>
            </span>
          </label>
          <FieldError message={error?.fields.enabled} />
          <div className="online-settings-row">
            <Field
              label="Sample rate"
              error={rateError ?? error?.fields.sampleRate}
              hint="Share of eligible spans scored, chosen by span id."
            >
              <span className="online-rate-input">
                <Input
                  name="samplePercent"
                  inputMode="decimal"
                  value={values.samplePercent}
                  readOnly={!canEdit}
                  onChange={(e) => (set({ samplePercent: e.target.value }), setRateError(null))}
                />
                <span className="muted" aria-hidden="true">
                  %
                </span>
              </span>
            </Field>
            <Field
              label="Judge model"
              error={error?.fields.judgeModelRouteId}
              hint="The model route that grades each sampled span against the rubric."
            >
              <Select
                name="judgeModelRouteId"
                value={values.judgeModelRouteId}
                disabled={!canEdit}
                onChange={(e) => set({ judgeModelRouteId: e.target.value })}
              >
                {judgeOptions.map((route) => (
                  <option key={route.id} value={route.id} disabled={!route.available}>
                    {route.name}
                    {route.available ? '' : ' — unavailable'}
                  </option>
                ))}
              </Select>
            </Field>
          </div>
          <div className="field">
            <label className="field-label" htmlFor={rubricId}>
              Rubric
            </label>
            <textarea
              id={rubricId}
              name="rubric"
              className="textarea"
              rows={5}
              value={values.rubric}
              readOnly={!canEdit}
              aria-invalid={rubricError ? true : undefined}
              aria-describedby={[rubricError ? `${rubricId}-error` : null, `${rubricId}-hint`]
                .filter(Boolean)
                .join(' ')}
              onChange={(e) => set({ rubric: e.target.value })}
              placeholder="Pass when the reply answers the customer’s question politely and correctly."
            />
            <FieldError id={`${rubricId}-error`} message={rubricError} />
            <p className="field-hint" id={`${rubricId}-hint`}>
              {rubricHint}
            </p>
          </div>
        </CardBody>
        <CardFooter>
          <span className="subtle" role="status">
            {dirty ? (
              'Unsaved changes.'
            ) : stored.updatedAt ? (
              <>
                Changed <span title={formatDateTime(stored.updatedAt)}>{formatRelative(stored.updatedAt)}</span> by{' '}
                {person(stored.updatedBy)}
              </>
            ) : (
              'Off by default: never changed for this prompt.'
            )}
          </span>
          {canEdit ? (
            <Button type="submit" variant="primary" loading={save.isPending}>
              Save
            </Button>
          ) : (
            <span className="subtle">
              {scope.readOnlyReason === 'archived'
                ? 'An archived prompt’s online evaluation cannot be changed.'
                : 'Only editors and admins change online evaluation.'}
            </span>
          )}
        </CardFooter>
      </form>
    </Card>
  );
}

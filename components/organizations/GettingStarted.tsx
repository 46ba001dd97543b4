'use client';

import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { MeterBar } from '@/components/ui/Meter';
import { ArrowRightIcon, CheckIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import type { GettingStarted as Progress } from '@/server/orgs/schemas';
import './organizations.css';

type Step = {
  key: string;
  done: boolean;
  title: string;
  body: ReactNode;
  action: { href: string; label: string } | null;
};

// The path from sign-up to production, each step read from what the organization has (never stored):
// a prompt, its first published version, a key that has fetched it, traces, a teammate.
function stepsOf(progress: Progress, base: string, canWrite: boolean, canInvite: boolean): Step[] {
  // A step whose prompt does not exist yet (no prompt in setup, none active) has no action: the step before comes first.
  const setup = progress.setupPromptId && `${base}/prompts/${progress.setupPromptId}`;
  const active = progress.activePromptId && `${base}/prompts/${progress.activePromptId}`;
  const steps: Step[] = [
    {
      key: 'prompt',
      done: progress.hasPrompt,
      title: 'Create a prompt',
      body: 'Name it, then write its messages and model settings in your own draft; try it in the playground as you type.',
      action: canWrite ? { href: `${base}/prompts`, label: 'Go to prompts' } : null,
    },
    {
      key: 'publish',
      done: progress.hasPublished,
      title: 'Publish version 1',
      body: 'Add a few dataset cases and run the baseline evaluation: its version gets the production label.',
      action: canWrite && setup ? { href: `${setup}/evals`, label: 'Run the baseline' } : null,
    },
    {
      key: 'retrieve',
      done: progress.hasRetrieved,
      title: 'Fetch it from your code',
      body: progress.hasRetrievalKey
        ? 'A retrieval key exists: call the API or the SDK with it, and this step completes with the first fetch.'
        : 'Create a read-only retrieval key on the prompt’s Keys tab and fetch the production version (curl or SDK).',
      action: active
        ? { href: `${active}/keys`, label: progress.hasRetrievalKey ? 'See the snippets' : 'Create a key' }
        : null,
    },
    {
      key: 'traces',
      done: progress.hasTraces,
      title: 'Send traces',
      body: 'Create an ingestion key and send spans from your app, natively or from any OpenTelemetry exporter.',
      action: { href: `${base}/ingestion-keys`, label: 'Ingestion keys' },
    },
  ];
  if (canInvite || progress.hasTeammate)
    steps.push({
      key: 'teammate',
      done: progress.hasTeammate,
      title: 'Invite a teammate',
      body: 'Reviews, releases and keys are better shared: editors write and evaluate, viewers read.',
      action: canInvite ? { href: `${base}/members`, label: 'Invite' } : null,
    });
  return steps;
}

/** The overview's "Get started" checklist; gone once every step is done. */
export function GettingStarted({
  organizationId,
  canWrite,
  canInvite,
}: {
  organizationId: string;
  canWrite: boolean;
  canInvite: boolean;
}) {
  const trpc = useTRPC();
  const progress = useQuery(trpc.organizations.gettingStarted.queryOptions({ organizationId }));
  if (!progress.data) return null;
  const steps = stepsOf(progress.data, `/organizations/${organizationId}`, canWrite, canInvite);
  const done = steps.filter((step) => step.done).length;
  if (done === steps.length) return null;
  const next = steps.find((step) => !step.done);
  return (
    <Card aria-labelledby="getting-started-title" className="getting-started">
      <CardHeader
        titleId="getting-started-title"
        title="Get started"
        description="From a first draft to a version your code fetches and traces you can read."
        actions={
          <div className="getting-started-progress">
            <span className="muted">
              {done} of {steps.length} done
            </span>
            <MeterBar
              className="getting-started-meter"
              label="Steps done"
              value={done}
              max={steps.length}
              valueText={`${done} of ${steps.length} steps done`}
            />
          </div>
        }
      />
      <CardBody>
        <ol className="getting-started-steps">
          {steps.map((step, index) => (
            <li
              key={step.key}
              data-step={step.key}
              data-done={step.done}
              aria-current={step === next ? 'step' : undefined}
            >
              <span className="getting-started-mark" aria-hidden="true">
                {step.done ? <CheckIcon size={14} /> : index + 1}
              </span>
              <div className="getting-started-text">
                <span className="getting-started-title">
                  {step.title}
                  {step.done ? <span className="visually-hidden"> (done)</span> : null}
                </span>
                {step.done ? null : <span className="muted">{step.body}</span>}
              </div>
              {!step.done && step.action ? (
                <ButtonLink href={step.action.href} size="sm" variant={step === next ? 'primary' : 'secondary'}>
                  {step.action.label} <ArrowRightIcon size={14} />
                </ButtonLink>
              ) : null}
            </li>
          ))}
        </ol>
      </CardBody>
    </Card>
  );
}

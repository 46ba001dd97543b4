'use client';

import { useState } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { usePeople } from '@/components/evals/parts';
import type { PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { SkeletonRows } from '@/components/ui/States';
import { LockIcon } from '@/components/ui/icons';
import { useIsAdmin, useReleasePolicy } from './hooks';
import { PolicyDialog } from './PolicyDialog';
import { passRateDropText, regressionsText } from './rules';

// The prompt's release policy in plain words; admins edit it, everyone else reads it.
export function ReleasePolicyCard({ scope, knownLabels }: { scope: PromptScope; knownLabels: string[] }) {
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const policy = useReleasePolicy(target);
  const isAdmin = useIsAdmin(scope.organizationId);
  const person = usePeople(scope.organizationId);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const setup = scope.prompt.state === 'setup';
  const archived = scope.prompt.state === 'archived';
  const canEdit = isAdmin && !setup && !archived;
  const data = policy.data;

  return (
    <Card id="release-policy" aria-labelledby="release-policy-title">
      <CardHeader
        titleId="release-policy-title"
        title={
          <span className="inline">
            <LockIcon size={15} /> Release policy
          </span>
        }
        description="What moving a protected label to a new version must prove before applications get it."
        actions={
          canEdit && data ? (
            <Button size="sm" onClick={() => (setSaved(false), setEditing(true))}>
              Edit policy
            </Button>
          ) : null
        }
      />
      <CardBody>
        {policy.isPending ? (
          <SkeletonRows rows={3} label="Loading the release policy" />
        ) : policy.isError ? (
          <QueryErrorState title="Could not load the release policy" query={policy} />
        ) : data ? (
          <div className="stack-sm">
            {saved ? <Alert tone="success">Release policy saved. It applies from the next label move.</Alert> : null}
            <dl className="description-list policy-list">
              <dt>Protected labels</dt>
              <dd data-testid="protected-labels">
                {data.protectedLabels.length === 0 ? (
                  <span className="subtle">None: every label moves freely.</span>
                ) : (
                  <span className="inline">
                    {data.protectedLabels.map((label) => (
                      <span key={label} className="label-chip">
                        {label}
                      </span>
                    ))}
                  </span>
                )}
              </dd>
              <dt>Evaluation</dt>
              <dd data-testid="policy-evaluation">
                {data.requireEvaluation ? (
                  <>
                    <Badge tone="warning">Required</Badge> Requires a completed comparison of the new version against
                    the version the label serves now.
                  </>
                ) : (
                  <>
                    <Badge>Not required</Badge> Editors and admins move labels freely; a comparison, when chosen, is
                    recorded with the move.
                  </>
                )}
              </dd>
              {data.requireEvaluation ? (
                <>
                  <dt>Pass rate</dt>
                  <dd>{passRateDropText(data.maxPassRateDrop)}</dd>
                  <dt>Regressions</dt>
                  <dd>{regressionsText(data.maxRegressions)}</dd>
                </>
              ) : null}
              <dt>Always allowed</dt>
              <dd>
                Rolling a label back to a version it served before.
                {data.requireEvaluation ? ' Admins may override a refusal, with a reason kept in the history.' : ''}
              </dd>
            </dl>
          </div>
        ) : null}
      </CardBody>
      {data ? (
        <CardFooter>
          <span className="subtle">
            {setup ? (
              'A prompt in setup has the default policy; it can be changed once the baseline publishes v1.'
            ) : data.isDefault ? (
              'The default policy: never changed for this prompt.'
            ) : data.updatedAt ? (
              <>
                Changed <span title={formatDateTime(data.updatedAt)}>{formatRelative(data.updatedAt)}</span> by{' '}
                {person(data.updatedBy)}
              </>
            ) : null}
          </span>
          {!isAdmin ? (
            <span className="subtle">Only admins change the release policy.</span>
          ) : archived ? (
            <span className="subtle">An archived prompt keeps its policy; it cannot be changed.</span>
          ) : null}
        </CardFooter>
      ) : null}
      {editing && data ? (
        <PolicyDialog
          target={target}
          policy={data}
          knownLabels={knownLabels}
          onClose={() => setEditing(false)}
          onSaved={() => setSaved(true)}
        />
      ) : null}
    </Card>
  );
}

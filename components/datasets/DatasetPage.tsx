'use client';

import { useMemo, useState } from 'react';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { ListIcon } from '@/components/ui/icons';
import { AddCaseForm } from './AddCaseForm';
import { CapacityMeter } from './CapacityMeter';
import { CaseTable } from './CaseTable';
import { download, fileBaseName, toCsv, toJsonl } from './exportFile';
import { ImportDialog } from './ImportDialog';
import { useDataset } from './useDataset';
import { quickEvaluationSize } from './types';
import './datasets.css';

function DatasetPanel({ scope }: { scope: PromptScope }) {
  // Stable, so the dataset's actions are too and the memoized case table skips unrelated renders.
  const target = useMemo(
    () => ({ organizationId: scope.organizationId, promptId: scope.promptId }),
    [scope.organizationId, scope.promptId],
  );
  const data = useDataset(target);
  const [importing, setImporting] = useState(false);
  const readOnly = !scope.canWrite;

  if (data.query.isPending) {
    return (
      <Card>
        <SkeletonRows rows={5} label="Loading dataset" />
      </Card>
    );
  }
  if (data.query.isError || !data.dataset) {
    return (
      <Card>
        <QueryErrorState title="Could not load the dataset" query={data.query} />
      </Card>
    );
  }
  const dataset = data.dataset;
  const base = fileBaseName(scope.prompt.name);

  return (
    <Card flush className="dataset-card">
      <CardHeader
        title="Test cases"
        description={`Inputs with expected outputs, in evaluation order. Quick evaluations use the first ${quickEvaluationSize}.`}
        actions={
          <div className="dataset-actions">
            <CapacityMeter count={dataset.count} capacity={dataset.capacity} />
            <div className="inline">
              <Button
                size="sm"
                disabled={dataset.count === 0}
                title={dataset.count === 0 ? 'Add a case first: there is nothing to export.' : undefined}
                onClick={() => download(`${base}.csv`, toCsv(dataset.rows), 'text/csv')}
              >
                Export CSV
              </Button>
              <Button
                size="sm"
                disabled={dataset.count === 0}
                title={dataset.count === 0 ? 'Add a case first: there is nothing to export.' : undefined}
                onClick={() => download(`${base}.jsonl`, toJsonl(dataset.rows), 'application/x-ndjson')}
              >
                Export JSONL
              </Button>
              {!readOnly ? (
                <Button size="sm" variant="primary" onClick={() => (data.setNotice(null), setImporting(true))}>
                  Import
                </Button>
              ) : null}
            </div>
          </div>
        }
      />
      {data.notice && !importing ? (
        <div className="dataset-notice">
          <Alert
            tone={data.notice.tone}
            action={
              <Button size="sm" variant="ghost" onClick={() => data.setNotice(null)}>
                Dismiss
              </Button>
            }
          >
            {data.notice.text}
          </Alert>
        </div>
      ) : null}
      {dataset.warnings.length ? (
        <div className="dataset-notice">
          <Alert
            tone="warning"
            title={`${dataset.warnings.length} ${dataset.warnings.length === 1 ? 'case cannot' : 'cases cannot'} run under this prompt’s input type`}
          >
            Evaluations record {dataset.warnings.length === 1 ? 'it' : 'them'} as errors without charging a credit. A
            prompt that takes variables needs each input as a JSON object of their values, such as{' '}
            <code>{'{"name": "Ada"}'}</code>; a text input fills the prompt’s only variable. Checked against your draft,
            else the latest saved version.
          </Alert>
        </div>
      ) : null}
      <div className="dataset-table">
        {dataset.count === 0 ? (
          <EmptyState
            icon={<ListIcon size={20} />}
            title="No test cases yet"
            description={
              readOnly
                ? 'Nobody has added cases to this prompt.'
                : 'Add cases one by one below, or import a CSV or JSONL file.'
            }
            action={!readOnly ? <Button onClick={() => setImporting(true)}>Import a file</Button> : undefined}
          />
        ) : (
          <CaseTable scope={target} dataset={dataset} actions={data.actions} readOnly={readOnly} />
        )}
      </div>
      {!readOnly ? <AddCaseForm scope={target} dataset={dataset} data={data} /> : null}
      <ImportDialog open={importing} onClose={() => setImporting(false)} scope={target} dataset={dataset} data={data} />
    </Card>
  );
}

export function DatasetPage({ organizationId, promptId }: { organizationId: string; promptId: string }) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <DatasetPanel scope={scope} />}
    </PromptShell>
  );
}

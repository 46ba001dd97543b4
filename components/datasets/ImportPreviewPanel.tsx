'use client';

import Link from 'next/link';
import { billingPath } from '@/components/billing/links';
import { useCheckoutAvailable } from '@/components/billing/checkout-availability';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { planCapacity } from '@/server/datasets/schemas';
import type { ParseProblem, SourceRow } from './importFile';
import type { ImportPreview, RowError } from './types';

type Rejected = { sourceRow: number; messages: string[] };

// A 400 from input hygiene names its fields by path (`rows.3.input`, zero-based): as row errors.
export function rowErrorsOfIssues(fields: Record<string, string> | undefined): RowError[] {
  return Object.entries(fields ?? {}).flatMap(([path, message]) => {
    const match = /^rows\.(\d+)(?:\.(\w+))?/.exec(path);
    return match ? [{ row: Number(match[1]) + 1, field: match[2] ?? 'row', message }] : [];
  });
}

// Server row numbers are 1-based positions in the rows sent; show the file's own row numbers.
export function rejectedRows(rows: SourceRow[], problems: ParseProblem[], rowErrors: RowError[]): Rejected[] {
  const byRow = new Map<number, string[]>();
  const add = (sourceRow: number, message: string) => byRow.set(sourceRow, [...(byRow.get(sourceRow) ?? []), message]);
  for (const problem of problems) add(problem.sourceRow, problem.message);
  for (const error of rowErrors) {
    const source = rows[error.row - 1]?.sourceRow ?? error.row;
    add(source, error.field && error.field !== 'row' ? `${error.field}: ${error.message}` : error.message);
  }
  return [...byRow.entries()].sort(([a], [b]) => a - b).map(([sourceRow, messages]) => ({ sourceRow, messages }));
}

function rowList(numbers: number[]): string {
  return numbers.length <= 12
    ? numbers.join(', ')
    : `${numbers.slice(0, 12).join(', ')} and ${numbers.length - 12} more`;
}

// What the rows read would do: counts, duplicates, rejected rows (each removable) and the room left.
export function ImportPreviewPanel({
  rowsRead,
  pending,
  previewData,
  importDetails,
  skipped,
  rejected,
  onRemoveRow,
  capacity,
  countAfter,
  organizationId,
  replacing,
}: {
  rowsRead: number;
  pending: boolean;
  previewData: ImportPreview | undefined;
  importDetails: Partial<ImportPreview> | null;
  skipped: number[];
  rejected: Rejected[];
  onRemoveRow: (sourceRow: number) => void;
  capacity: number;
  countAfter: number | null;
  organizationId: string;
  // Replace all is chosen: the rows already there do not count, so Replace cannot make room.
  replacing: boolean;
}) {
  return (
    <section className="import-preview" aria-label="Import preview" aria-busy={pending || undefined}>
      <div className="preview-stats">
        <div className="preview-stat">
          <span className="preview-stat-value">{rowsRead}</span>
          <span className="preview-stat-label">rows read</span>
        </div>
        <div className="preview-stat" data-tone="success">
          <span className="preview-stat-value">{pending ? '…' : (previewData?.wouldAdd ?? 0)}</span>
          <span className="preview-stat-label">to add</span>
        </div>
        <div className="preview-stat" data-tone={skipped.length ? 'warning' : undefined}>
          <span className="preview-stat-value">{skipped.length}</span>
          <span className="preview-stat-label">duplicates skipped</span>
        </div>
        <div className="preview-stat" data-tone={rejected.length ? 'danger' : undefined}>
          <span className="preview-stat-value">{rejected.length}</span>
          <span className="preview-stat-label">rejected</span>
        </div>
      </div>
      {skipped.length ? <p className="muted">Duplicates skipped: rows {rowList(skipped)}.</p> : null}
      {rejected.length ? (
        <div className="rejected">
          <p className="rejected-title">Fix these rows in the file, or remove them from this import:</p>
          <ul className="rejected-list" aria-label="Rejected rows">
            {rejected.map((row) => (
              <li key={row.sourceRow}>
                <strong>Row {row.sourceRow}</strong>
                <span>{row.messages.join(' · ')}</span>
                <Button size="sm" variant="ghost" onClick={() => onRemoveRow(row.sourceRow)}>
                  Remove row {row.sourceRow}
                </Button>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {previewData || importDetails ? (
        <CapacityOutcome
          preview={{ ...previewData, ...importDetails } as ImportPreview}
          capacity={capacity}
          countAfter={countAfter}
          organizationId={organizationId}
          replacing={replacing}
        />
      ) : null}
    </section>
  );
}

function CapacityOutcome({
  preview,
  capacity,
  countAfter,
  organizationId,
  replacing,
}: {
  preview: ImportPreview;
  replacing: boolean;
  capacity: number;
  countAfter: number | null;
  organizationId: string;
}) {
  const checkoutAvailable = useCheckoutAvailable();
  const over = preview.requestedAddition > preview.availableCapacity;
  if (over) {
    // Below Pro's capacity the organization is on Free: a bigger dataset is one upgrade away.
    const onFree = capacity < planCapacity.pro && checkoutAvailable;
    return (
      <Alert tone="error" title="Not enough room">
        {replacing ? (
          <>
            The file has {preview.requestedAddition} new cases and this dataset holds {capacity}: remove rows from the
            file.
          </>
        ) : (
          <>
            {preview.requestedAddition} new cases would not fit: {preview.currentCount} of {capacity} are used, so{' '}
            {preview.availableCapacity} can be added.{' '}
            {preview.requestedAddition > capacity ? 'Remove rows from the file.' : 'Remove rows or use Replace.'}
          </>
        )}
        {onFree ? (
          <>
            {' '}
            <Link href={billingPath(organizationId)}>Upgrade to Pro for {planCapacity.pro} cases</Link>
          </>
        ) : null}
      </Alert>
    );
  }
  return countAfter !== null ? (
    <p className="muted">
      After import: <strong>{countAfter}</strong> / {capacity} cases.
    </p>
  ) : null;
}

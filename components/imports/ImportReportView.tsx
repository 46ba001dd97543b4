'use client';

import Link from 'next/link';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Table } from '@/components/ui/Table';
import type { ImportProblem, ImportReport } from '@/server/imports/schemas';
import { problemPath } from './importDocument';

// The report of a dry run or an import: one row per prompt with its notes, then the document's notes.
// After an import (`stored`), names link to the prompts.
export function ImportReportView({
  report,
  organizationId,
  stored,
}: {
  report: ImportReport;
  organizationId: string;
  stored: boolean;
}) {
  return (
    <section className="import-report" aria-label={stored ? 'Import result' : 'Import preview'}>
      {report.prompts.length === 0 ? (
        <p className="muted">The document holds no prompts.</p>
      ) : (
        <Table caption={stored ? 'Imported prompts' : 'Prompts in the document'} className="import-report-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Action</th>
              <th scope="col">Versions</th>
              <th scope="col">Labels</th>
              <th scope="col">Cases</th>
            </tr>
          </thead>
          {report.prompts.map((prompt, index) => (
            <tbody key={`${prompt.name}-${index}`} data-report-prompt={prompt.name}>
              <tr>
                <td>
                  {stored && prompt.promptId ? (
                    <Link className="prompt-link" href={`/organizations/${organizationId}/prompts/${prompt.promptId}`}>
                      {prompt.name}
                    </Link>
                  ) : (
                    <strong>{prompt.name}</strong>
                  )}
                </td>
                <td>
                  {prompt.action === 'create' ? (
                    <Badge tone="success">{stored ? 'Created' : 'Create'}</Badge>
                  ) : (
                    <Badge tone="warning" title="A prompt with this name exists: it is left alone.">
                      {stored ? 'Skipped' : 'Skip'} · exists
                    </Badge>
                  )}
                </td>
                <td className="cell-nowrap">{prompt.versions}</td>
                <td className="cell-nowrap">{prompt.labels}</td>
                <td className="cell-nowrap">{prompt.cases}</td>
              </tr>
              {prompt.notes.length ? (
                <tr className="import-notes-row">
                  <td colSpan={5}>
                    <ul className="import-notes" aria-label={`Notes for ${prompt.name}`}>
                      {prompt.notes.map((note, i) => (
                        <li key={i}>{note}</li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ) : null}
            </tbody>
          ))}
        </Table>
      )}
      {report.notes.length ? (
        <Alert tone="info" title="Notes on the document">
          <ul className="import-notes" aria-label="Notes on the document">
            {report.notes.map((note, i) => (
              <li key={i}>{note}</li>
            ))}
          </ul>
        </Alert>
      ) : null}
    </section>
  );
}

// 422 import_rejected: every place in the document that stopped the import, by JSON pointer.
export function ImportProblemsView({ problems }: { problems: ImportProblem[] }) {
  return (
    <Alert tone="error" title="The document was refused: nothing was stored">
      <p>Fix these places in the document, then preview again.</p>
      <ul className="import-problems" aria-label="Problems in the document">
        {problems.map((problem, i) => (
          <li key={i}>
            <code className="mono">{problemPath(problem.path)}</code>
            <span>{problem.message}</span>
          </li>
        ))}
      </ul>
    </Alert>
  );
}

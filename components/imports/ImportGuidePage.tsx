'use client';

import Link from 'next/link';
import { useMemo, useState } from 'react';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { PageHeader } from '@/components/ui/PageHeader';
import { SnippetTabs } from '@/components/ui/SnippetTabs';
import { can } from '@/server/auth/schemas';
import {
  cliImportSnippet,
  curlFileSnippet,
  curlImportSnippet,
  exportSnippet,
  langfuseCliSnippet,
  openaiBodiesExample,
  openaiEvalFetchSnippet,
  type GuideTarget,
} from './guideSnippets';
import { ImportPromptsDialog } from './ImportPromptsDialog';
import '@/components/traces/traces.css';
import './imports.css';

function GuideSections({ target }: { target: GuideTarget }) {
  const snippets = useMemo(
    () => ({
      openai: [
        {
          id: 'document',
          tab: 'Document',
          label: 'Two versions of one prompt',
          copyLabel: 'Copy JSON',
          code: JSON.stringify(openaiBodiesExample, null, 2),
        },
        {
          id: 'cli',
          tab: 'CLI',
          label: 'Import a file with the CLI',
          copyLabel: 'Copy commands',
          code: cliImportSnippet(target, 'openai', 'prompts.json'),
        },
        {
          id: 'curl',
          tab: 'curl',
          label: 'Import with curl',
          copyLabel: 'Copy command',
          code: curlImportSnippet(target),
        },
        {
          id: 'curl-file',
          tab: 'curl with a file',
          label: 'Import a file with curl and jq',
          copyLabel: 'Copy command',
          code: curlFileSnippet(target),
        },
      ],
      evals: [
        {
          id: 'eval',
          tab: 'Fetch and import',
          label: 'Fetch an OpenAI eval and import it',
          copyLabel: 'Copy commands',
          code: openaiEvalFetchSnippet(target),
        },
      ],
      langfuse: [
        {
          id: 'cli',
          tab: 'CLI',
          label: 'Import from Langfuse with the CLI',
          copyLabel: 'Copy commands',
          code: langfuseCliSnippet(target),
        },
      ],
      export: [
        { id: 'export', tab: 'CLI and curl', label: 'Export', copyLabel: 'Copy commands', code: exportSnippet(target) },
      ],
    }),
    [target],
  );
  return (
    <div className="guide">
      <Card aria-labelledby="guide-openai">
        <CardHeader titleId="guide-openai" title="OpenAI prompts" />
        <CardBody className="stack">
          <p>
            OpenAI shuts its reusable prompt objects and hosted Evals down on <strong>2026-11-30</strong> and asks you
            to move the prompt text into your own code. Bring it here instead, with its versions, and keep retrieving it
            by label.
          </p>
          <ul>
            <li>
              Paste the request body your code sends today (Responses or Chat Completions), one object or an array, and
              add a <code>name</code> to each. Several bodies with one name become one prompt with several versions (
              <code>version</code>, else the order given).
            </li>
            <li>
              What maps: <code>instructions</code> becomes the first system message, then the <code>input</code> or{' '}
              <code>messages</code> in order (<code>developer</code> becomes system); <code>{'{{variables}}'}</code> are
              kept; <code>model</code>, <code>temperature</code>, <code>max_output_tokens</code> /{' '}
              <code>max_tokens</code>, function <code>tools</code> and a <code>json_schema</code> format (the output
              schema).
            </li>
            <li>
              What is noted instead: anything without a counterpart here (other input items, other fields, a model this
              server has no route for). Nothing is dropped silently: the preview lists every note before you import.
            </li>
            <li>
              The <code>production</code> label goes to the highest version, or to the one you name as “Production
              version”.
            </li>
          </ul>
          <SnippetTabs title="OpenAI import" snippets={snippets.openai} />
        </CardBody>
      </Card>

      <Card aria-labelledby="guide-evals">
        <CardHeader titleId="guide-evals" title="OpenAI Evals" />
        <CardBody className="stack">
          <p>
            One document <code>{'{ eval, items, prompt }'}</code>: the eval object, its JSONL items as objects (
            <code>{'{ "item": { … } }'}</code>) and the request body of the prompt under test. The items become the
            prompt’s test cases: the input is the item field the prompt references (<code>{'{{item.question}}'}</code>
            ), the expected output the field a <code>string_check</code> grader compares with. A{' '}
            <code>string_check</code> grader becomes “Expected output” scoring, a <code>score_model</code> or{' '}
            <code>label_model</code> grader a model judge with its messages as the rubric; other graders are noted.
          </p>
          <SnippetTabs title="OpenAI eval import" snippets={snippets.evals} />
        </CardBody>
      </Card>

      <Card aria-labelledby="guide-langfuse">
        <CardHeader titleId="guide-langfuse" title="Langfuse" />
        <CardBody className="stack">
          <p>
            The CLI reads every prompt and version from Langfuse’s public API with your project keys, and datasets into
            a prompt’s test cases. Or paste an array of prompt objects as Langfuse returns them into the import dialog.
          </p>
          <ul>
            <li>
              Labels carry over (<code>latest</code> is implicit here); a text prompt becomes one user message, chat
              messages map role for role; <code>@@@langfusePrompt</code> references are replaced by the referenced text.
            </li>
            <li>
              <code>config.model</code>, <code>temperature</code>, <code>max_tokens</code>, <code>response_format</code>{' '}
              and <code>tools</code> map as for OpenAI; placeholders, tags, commit messages and the rest of the config
              are noted.
            </li>
          </ul>
          <SnippetTabs title="Langfuse import" snippets={snippets.langfuse} />
        </CardBody>
      </Card>

      <Card aria-labelledby="guide-export">
        <CardHeader titleId="guide-export" title="Export: take everything out again" />
        <CardBody className="stack">
          <p>
            Every prompt exports as a lossless <code>.promptloop.json</code> bundle: versions with their contents and
            dates, labels, the scoring policy and the test cases. Use Export on a prompt, Export all on the prompts
            page, or the CLI. A bundle imports back here or into another server with the source “Promptloop bundle”.
          </p>
          <SnippetTabs title="Export" snippets={snippets.export} />
        </CardBody>
      </Card>
    </div>
  );
}

export function ImportGuidePage({ organizationId }: { organizationId: string }) {
  const [importing, setImporting] = useState(false);
  const target = useMemo(
    () => ({ origin: typeof window === 'undefined' ? '' : window.location.origin, organizationId }),
    [organizationId],
  );
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        const canImport = can(org.role, 'prompts.write');
        return (
          <div className="page">
            <PageHeader
              breadcrumbs={
                <>
                  <Link href="/organizations">Organizations</Link>/
                  <Link href={`/organizations/${org.id}`}>{org.name}</Link>/
                  <Link href={`/organizations/${org.id}/prompts`}>Prompts</Link>
                </>
              }
              title="Coming from OpenAI prompts or Langfuse"
              description="Import your prompts with their versions, labels and test cases; see beforehand what carries over."
              actions={
                canImport ? (
                  <Button variant="primary" onClick={() => setImporting(true)}>
                    Import prompts
                  </Button>
                ) : undefined
              }
            />
            <GuideSections target={target} />
            {canImport ? (
              <ImportPromptsDialog organizationId={org.id} open={importing} onClose={() => setImporting(false)} />
            ) : null}
          </div>
        );
      }}
    </OrganizationGate>
  );
}

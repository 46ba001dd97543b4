'use client';

import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { download } from '@/components/datasets/exportFile';
import { Button } from '@/components/ui/Button';
import { FieldError } from '@/components/ui/FieldError';
import { useTRPCClient } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { BundlePage } from '@/server/imports/schemas';
import { bundleFileName, bundleText, mergeBundlePages, promptCount } from './importDocument';
import './imports.css';

const bundleType = 'application/json';

// Downloads one prompt as a lossless bundle: <name>.promptloop.json (viewers may export too).
export function ExportPromptButton({
  organizationId,
  promptId,
  name,
}: {
  organizationId: string;
  promptId: string;
  name: string;
}) {
  const client = useTRPCClient();
  const exporting = useMutation({
    mutationFn: () => client.imports.exportPrompt.query({ organizationId, promptId }),
    onSuccess: (bundle) => download(bundleFileName(name), bundleText(bundle), bundleType),
  });
  return (
    <span className="inline">
      <Button
        loading={exporting.isPending}
        onClick={() => exporting.mutate()}
        title="Download versions, labels, scoring and test cases as a .promptloop.json bundle"
      >
        Export
      </Button>
      <FieldError message={readAppError(exporting.error)?.message} />
    </span>
  );
}

// Follows the organization export's pages (25 prompts each) and downloads them as one bundle.
export function ExportAllButton({
  organizationId,
  organizationName,
}: {
  organizationId: string;
  organizationName: string;
}) {
  const client = useTRPCClient();
  const [exported, setExported] = useState<number | null>(null);
  const exporting = useMutation({
    mutationFn: async () => {
      const pages: BundlePage[] = [];
      let cursor: string | undefined;
      setExported(0);
      do {
        const page = await client.imports.exportOrganization.query({ organizationId, cursor });
        pages.push(page);
        setExported((count) => (count ?? 0) + page.prompts.length);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return mergeBundlePages(pages);
    },
    onSuccess: (bundle) => download(bundleFileName(organizationName), bundleText(bundle), bundleType),
    onSettled: () => setExported(null),
  });
  return (
    <span className="inline">
      {exporting.isPending && exported !== null ? (
        <span className="export-progress" role="status">
          {exported} of … prompts
        </span>
      ) : exporting.isSuccess ? (
        <span className="export-progress" role="status">
          Exported {promptCount(exporting.data.prompts.length)}
        </span>
      ) : null}
      <FieldError message={readAppError(exporting.error)?.message} />
      <Button
        loading={exporting.isPending}
        onClick={() => exporting.mutate()}
        title="Download every prompt of this organization, archived ones included, as one .promptloop.json bundle"
      >
        Export all
      </Button>
    </span>
  );
}

import {
  bundlePageSchema,
  bundleSchema,
  exportOrganizationQuery,
  importInput,
  importMaxBodyBytes,
  importReportSchema,
} from '../imports/schemas';
import { declareOperations } from './declare';
import { orgParams, promptParams } from './common';

// Moving prompts in and out (API.md): lossless bundles out, four sources in.
export const importOperations = declareOperations({
  export_prompt: {
    method: 'GET',
    path: '/organizations/{organizationId}/prompts/{promptId}/export',
    summary: 'Export one prompt as a bundle: versions, labels, scoring policy and dataset (no nextCursor)',
    params: promptParams,
    status: 200,
    response: bundleSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['prompts', 'export'], positional: ['promptId'] },
    dashboard: 'imports.exportPrompt',
  },
  export_organization: {
    method: 'GET',
    path: '/organizations/{organizationId}/export',
    summary: 'Export the organization’s prompts as bundles of at most 25, oldest first, archived included',
    description: 'Follow nextCursor until it is null; each page is a complete bundle. There is no limit parameter.',
    params: orgParams,
    query: exportOrganizationQuery,
    status: 200,
    response: bundlePageSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['organizations', 'export'], positional: [] },
    dashboard: 'imports.exportOrganization',
  },
  import_prompts: {
    method: 'POST',
    path: '/organizations/{organizationId}/imports',
    summary:
      'Import prompts from a bundle, OpenAI request bodies, Langfuse prompt objects or an OpenAI eval, all or nothing',
    description:
      'Bodies up to 8 MiB. dryRun answers 200 with the report and writes nothing. Any invalid prompt, version or case is 422 import_rejected with details.items [{ path, message }] (JSON pointers into document) and nothing stored. Names that exist are skipped (onConflict skip, default) or imported as "Name (imported)" (rename). The report notes everything that could not be carried.',
    params: orgParams,
    body: importInput,
    maxBodyBytes: importMaxBodyBytes,
    dryRunField: 'dryRun',
    status: 201,
    response: importReportSchema,
    errors: ['forbidden', 'read_only', 'not_found', 'import_rejected', 'payload_too_large'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['imports', 'create'], positional: ['source'] },
    dashboard: 'imports.importPrompts',
  },
});

import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { readText } from './args';
import { ApiError } from './api';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { CliError, exitCodes, usageError } from './exit';
import { shownPath, writeFileAtomically } from './files';
import {
  byteSize,
  conflictPolicies,
  duplicateNames,
  importMaxBodyBytes,
  importSources,
  mib,
  parseDocument,
  planParts,
  type Bundle,
  type Part,
  type Source,
} from './import-document';
import { rejection, rejectionMessage, renderReport, type ImportReport } from './import-report';
import { fetchLangfuseDocument, langfuseBaseUrl, parseDatasetMapping, type DatasetMapping } from './langfuse';

// `promptloop import SOURCE FILE` and `promptloop import langfuse --host URL`: reads the source's
// document (or fetches it from Langfuse), posts it to POST /organizations/{org}/imports with one
// Idempotency-Key per invocation (reused by the client's own retries), and prints the report as a
// table, or a 422 import_rejected as one line per refused item. A bundle over the 8 MiB body limit
// is sent in parts (each a whole number of prompts), checked first as dry runs so that a refusal
// still imports nothing; other sources over the limit are refused with advice.

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const size = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : mib(bytes));

async function postImport(
  ctx: Context,
  organizationId: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
): Promise<ImportReport> {
  const answer = await ctx.api.request('POST', `/organizations/${encodeURIComponent(organizationId)}/imports`, {
    body,
    idempotencyKey,
  });
  if (answer.headers.get('idempotency-replayed') === 'true')
    ctx.err('(replayed: this import had already been executed with this Idempotency-Key)');
  return answer.body as ImportReport;
}

// API.md: an Idempotency-Key is 8 to 128 characters (the CLI takes visible ASCII).
const keyPattern = /^[!-~]{8,128}$/;

// The key of part n of an import sent in parts: the given key + "-n", or, when that would pass 128
// characters, the key's SHA-256 (hex) + "-n". Either way the same given key names the same parts.
export function partKey(key: string, part: number): string {
  const suffix = `-${part}`;
  if (key.length + suffix.length <= 128) return `${key}${suffix}`;
  return `${createHash('sha256').update(key).digest('hex')}${suffix}`;
}

/** Reads the Langfuse project at `host`; --save also writes what was read. */
async function readLangfuse(
  ctx: Context,
  source: { host: string; publicKey: string; secretKey: string; datasets: DatasetMapping[] },
  save: string | undefined,
): Promise<unknown> {
  const fetched = await fetchLangfuseDocument({
    ...source,
    progress: ctx.err,
    baseDelayMs: Number(ctx.env.PROMPTLOOP_RETRY_BASE_MS) || undefined,
  });
  const items = source.datasets.length ? ` and ${plural(fetched.items, 'dataset item')}` : '';
  ctx.err(`Read ${plural(fetched.prompts, 'prompt')} (${plural(fetched.versions, 'version')})${items} from Langfuse.`);
  if (save !== undefined) {
    const file = path.resolve(save);
    writeFileAtomically(file, `${JSON.stringify(fetched.document, null, 2)}\n`);
    ctx.err(`Saved the Langfuse document to ${shownPath(file)}.`);
  }
  return fetched.document;
}

const duplicateNamesMessage = 'Two prompts of the document have one name.';

/**
 * A bundle over the request limit, part by part: every part checked as a dry run first (so a
 * refusal still imports nothing), then each imported under its own key derived from `key`.
 */
async function importInParts(
  ctx: Context,
  organizationId: string,
  options: Record<string, unknown>,
  bundle: Bundle,
  parts: Part[],
  key: string,
): Promise<ImportReport> {
  const duplicates = duplicateNames(bundle);
  if (duplicates.length)
    throw new CliError(rejectionMessage(duplicateNamesMessage, duplicates), exitCodes.apiError, {
      error: { code: 'import_rejected', message: duplicateNamesMessage, details: { items: duplicates } },
    });
  ctx.err(
    `The bundle is ${mib(byteSize({ ...options, document: bundle }))}, over the ${mib(importMaxBodyBytes)} request limit: sending it in ${parts.length} parts of whole prompts.`,
  );
  const reports: ImportReport[] = [];
  for (const [i, part] of parts.entries()) {
    ctx.err(`Checking part ${i + 1} of ${parts.length} (${plural(part.count, 'prompt')})…`);
    try {
      reports[i] = await postImport(ctx, organizationId, { ...options, dryRun: true, document: part.document }, key);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'import_rejected') throw rejection(error, part.offset);
      throw error;
    }
  }
  if (options.dryRun !== true)
    for (const [i, part] of parts.entries()) {
      ctx.err(`Importing part ${i + 1} of ${parts.length} (${plural(part.count, 'prompt')})…`);
      try {
        reports[i] = await postImport(
          ctx,
          organizationId,
          { ...options, document: part.document },
          partKey(key, i + 1),
        );
      } catch (error) {
        const done = i ? `Parts 1-${i} of ${parts.length} were imported.` : 'Nothing was imported.';
        const resume = `${done} Run the same command with --idempotency-key ${key} to finish: imported parts are replayed, not repeated.`;
        if (error instanceof ApiError && error.code === 'import_rejected')
          throw rejection(error, part.offset, { prefix: `Part ${i + 1} of ${parts.length}: `, tail: resume });
        if (error instanceof CliError)
          throw new CliError(
            `Part ${i + 1} of ${parts.length}: ${error.message}\n${resume}`,
            error.exitCode,
            error.body,
          );
        throw error;
      }
    }
  return { prompts: reports.flatMap((r) => r.prompts), notes: [...new Set(reports.flatMap((r) => r.notes))] };
}

export const importCommand: Command = {
  path: ['import'],
  summary:
    'Import prompts from a bundle, OpenAI request bodies, Langfuse prompts or an OpenAI eval; or straight from Langfuse',
  description: [
    'SOURCE is promptloop (a bundle from `promptloop export`), openai (one request body, an array of them, or a .jsonl file with one',
    'per line), langfuse (an array of Langfuse prompt objects) or openai_eval ({ eval, items, prompt }). FILE is a JSON file, or - for',
    'stdin. All or nothing: any invalid prompt, version or case refuses the whole import (exit 1) with the path of each. `import',
    'langfuse --host URL` reads every prompt version (and each --dataset-map dataset) through the Langfuse public API with',
    'LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY, then imports them. Requests are limited to 8 MiB: a larger bundle is sent in parts',
    '(all checked as dry runs first); a larger document of another source is refused with advice.',
  ].join(' '),
  positionals: [
    { name: 'source', description: `One of ${importSources.join(', ')}.` },
    { name: 'file', required: false, description: 'The document: a JSON file, - for stdin (not with --host).' },
  ],
  flags: [
    { name: 'dry-run', kind: 'boolean', description: 'Check and report what would be imported; write nothing.' },
    {
      name: 'on-conflict',
      kind: 'string',
      choices: conflictPolicies,
      description: 'A prompt whose name exists: skip it (default), or import it as "Name (imported)".',
    },
    {
      name: 'production-version',
      kind: 'integer',
      placeholder: 'n',
      description: 'openai, openai_eval: the version that gets the production label (default the highest).',
    },
    {
      name: 'idempotency-key',
      kind: 'string',
      placeholder: 'key',
      description:
        'Idempotency-Key to send (8-128 visible ASCII characters; default: a new one per run). The same key again replays the import.',
    },
    {
      name: 'host',
      kind: 'string',
      placeholder: 'url',
      description: 'langfuse: read the prompts from this Langfuse instance.',
    },
    {
      name: 'dataset-map',
      kind: 'list',
      placeholder: 'dataset=prompt',
      description:
        'With --host: the items of this Langfuse dataset become the dataset of this prompt (by its Langfuse name).',
    },
    {
      name: 'save',
      kind: 'string',
      placeholder: 'file',
      description: 'With --host: also write the document read from Langfuse to this file.',
    },
    {
      name: 'org',
      kind: 'string',
      placeholder: 'organizationId',
      description: 'Organization (default: the saved context, else your account default).',
    },
  ],
  examples: [
    'promptloop import promptloop prompts.bundle.json --dry-run',
    'promptloop import openai requests.jsonl --on-conflict rename',
    'promptloop import openai_eval eval.json --json',
    'LANGFUSE_PUBLIC_KEY=pk-lf-… LANGFUSE_SECRET_KEY=sk-lf-… promptloop import langfuse --host https://cloud.langfuse.com --dataset-map qa=movie-critic',
  ],
  async run(ctx, parsed) {
    const f = parsed.flags;
    const source = parsed.positionals[0] as Source;
    const file = parsed.positionals[1];
    if (!importSources.includes(source))
      throw usageError(`<source> "${source}" is not one of ${importSources.join(', ')}.`);
    const host = f.host as string | undefined;
    const hostOnly = (['dataset-map', 'save'] as const).filter((name) => f[name] !== undefined);
    if (host !== undefined && source !== 'langfuse')
      throw usageError('--host reads from Langfuse: use it with `import langfuse`.');
    if (host !== undefined && file !== undefined) throw usageError('Give FILE or --host, not both.');
    if (host === undefined && hostOnly.length) throw usageError(`--${hostOnly[0]} goes with --host.`);
    if (host === undefined && file === undefined)
      throw usageError(
        `Missing <file>${source === 'langfuse' ? ' (or --host URL to read from Langfuse)' : ''}. Run with --help for usage.`,
      );
    const productionVersion = f['production-version'] as number | undefined;
    if (productionVersion !== undefined && productionVersion < 1)
      throw usageError('--production-version: a version number, 1 or more.');
    const givenKey = f['idempotency-key'] as string | undefined;
    if (givenKey !== undefined && !keyPattern.test(givenKey))
      throw usageError('--idempotency-key: 8 to 128 visible ASCII characters.');

    let document: unknown;
    let organizationId: string;
    if (host !== undefined) {
      const base = langfuseBaseUrl(host);
      const datasets = ((f['dataset-map'] as string[] | undefined) ?? []).map(parseDatasetMapping);
      const { LANGFUSE_PUBLIC_KEY: publicKey, LANGFUSE_SECRET_KEY: secretKey } = ctx.env;
      if (!publicKey || !secretKey) {
        const missing = [!publicKey && 'LANGFUSE_PUBLIC_KEY', !secretKey && 'LANGFUSE_SECRET_KEY'].filter(Boolean);
        throw usageError(
          `Set ${missing.join(' and ')}: the Langfuse project's API keys (Settings → API Keys), sent as Basic auth to ${base}.`,
        );
      }
      // The organization first: no requests spent on Langfuse for an import that cannot happen.
      organizationId = await resolveOrganization(ctx, f.org);
      document = await readLangfuse(ctx, { host: base, publicKey, secretKey, datasets }, f.save as string | undefined);
    } else {
      document = parseDocument(source, readText(file, '<file>'), file === '-' ? 'stdin' : file);
      organizationId = await resolveOrganization(ctx, f.org);
    }

    const dryRun = f['dry-run'] === true;
    const options: Record<string, unknown> = { source };
    if (dryRun) options.dryRun = true;
    if (f['on-conflict'] !== undefined) options.onConflict = f['on-conflict'];
    if (productionVersion !== undefined) options.productionVersion = productionVersion;
    const parts = planParts(source, document, options);
    const key = givenKey ?? randomUUID();
    let report: ImportReport;
    if (parts.length === 1) {
      const bytes = byteSize({ ...options, document });
      ctx.err(`${dryRun ? 'Checking (dry run)' : 'Importing'} the ${source} document (${size(bytes)})…`);
      try {
        report = await postImport(ctx, organizationId, { ...options, document }, key);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'import_rejected') throw rejection(error, 0);
        throw error;
      }
    } else report = await importInParts(ctx, organizationId, options, document as Bundle, parts, key);
    ctx.out(ctx.json ? JSON.stringify(report, null, 2) : renderReport(report, { dryRun }));
  },
};

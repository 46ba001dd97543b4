// Copy-paste commands of the guide "Coming from OpenAI prompts / Langfuse": the import route with curl,
// the CLI's import and export, and fetching an OpenAI eval. Shell-safe: ids and URLs hold no quote.

import { shellQuote } from '@/lib/shell-quote';
import { cliInstallHint } from '@/lib/install-hints';

export type GuideTarget = { origin: string; organizationId: string };

// Two versions of one prompt, as the Responses API bodies an application sends (plus our `name`).
export const openaiBodiesExample = [
  {
    name: 'Support reply',
    version: 1,
    model: 'gpt-4.1',
    instructions: 'You answer questions about {{product}} in two sentences.',
    input: '{{question}}',
    temperature: 0.2,
  },
  {
    name: 'Support reply',
    version: 2,
    model: 'gpt-4.1',
    instructions: 'You answer questions about {{product}} in two short, friendly sentences.',
    input: '{{question}}',
    temperature: 0.2,
    max_output_tokens: 300,
  },
];

function importsUrl({ origin, organizationId }: GuideTarget): string {
  return `${origin}/api/v1/organizations/${organizationId}/imports`;
}

const tokenComment = '# ACCESS_TOKEN: a management token, e.g. from a service account (Settings → Service accounts)';

// The document inline: a dry run first (nothing stored), then the import with an Idempotency-Key.
export function curlImportSnippet(target: GuideTarget): string {
  const body = (dryRun: boolean) =>
    JSON.stringify({ source: 'openai', ...(dryRun ? { dryRun: true } : {}), document: openaiBodiesExample });
  const call = (dryRun: boolean) =>
    [
      `curl -s -X POST '${importsUrl(target)}' \\`,
      `  -H "Authorization: Bearer $ACCESS_TOKEN" \\`,
      `  -H 'Content-Type: application/json' \\`,
      ...(dryRun ? [] : [`  -H 'Idempotency-Key: import-support-reply-0001' \\`]),
      `  -d ${shellQuote(body(dryRun))}`,
    ].join('\n');
  return [
    tokenComment,
    '',
    '# 1. preview: the report, nothing stored',
    call(true),
    '',
    '# 2. import',
    call(false),
  ].join('\n');
}

// A document in a file, wrapped into the request body with jq.
export function curlFileSnippet(target: GuideTarget): string {
  return [
    tokenComment,
    `jq '{source: "openai", dryRun: true, document: .}' prompts.json |`,
    `  curl -s -X POST '${importsUrl(target)}' \\`,
    `    -H "Authorization: Bearer $ACCESS_TOKEN" \\`,
    `    -H 'Content-Type: application/json' \\`,
    '    --data-binary @-',
  ].join('\n');
}

function cli(target: GuideTarget, command: string): string {
  return `promptloop ${command} --org ${target.organizationId}`;
}

function loginLine(target: GuideTarget): string {
  return `${cliInstallHint(target.origin)}\npromptloop login --url ${target.origin}   # once; or PROMPTLOOP_CLIENT_ID / PROMPTLOOP_CLIENT_SECRET`;
}

export function cliImportSnippet(target: GuideTarget, source: 'openai' | 'openai_eval', file: string): string {
  return [
    loginLine(target),
    `export PROMPTLOOP_URL=${target.origin}`,
    cli(target, `import ${source} ${file} --dry-run`),
    cli(target, `import ${source} ${file}`),
  ].join('\n');
}

export function langfuseCliSnippet(target: GuideTarget): string {
  return [
    loginLine(target),
    `export PROMPTLOOP_URL=${target.origin}`,
    '# Langfuse project keys (Settings → API keys); the CLI reads every prompt and version itself',
    "export LANGFUSE_PUBLIC_KEY='pk-lf-…'",
    "export LANGFUSE_SECRET_KEY='sk-lf-…'",
    cli(target, 'import langfuse --host https://cloud.langfuse.com --dry-run'),
    '# a Langfuse dataset becomes the test cases of one prompt: --dataset-map DATASET=PROMPT',
    cli(target, 'import langfuse --host https://cloud.langfuse.com --dataset-map support-questions=support-reply'),
  ].join('\n');
}

// The eval and its items from OpenAI's API, joined with the prompt into one { eval, items, prompt } document.
export function openaiEvalFetchSnippet(target: GuideTarget): string {
  return [
    "# the eval object and the JSONL file of its items (the file id is in the eval run's data source)",
    'curl -s https://api.openai.com/v1/evals/$EVAL_ID -H "Authorization: Bearer $OPENAI_API_KEY" > eval.json',
    'curl -s https://api.openai.com/v1/files/$FILE_ID/content -H "Authorization: Bearer $OPENAI_API_KEY" > items.jsonl',
    '# prompt.json: the request body your code sends (with {{item.field}} placeholders)',
    'jq -n --slurpfile eval eval.json --slurpfile items items.jsonl --slurpfile prompt prompt.json \\',
    "  '{eval: $eval[0], items: $items, prompt: $prompt[0]}' > openai-eval.json",
    cli(target, 'import openai_eval openai-eval.json --dry-run'),
  ].join('\n');
}

export function exportSnippet(target: GuideTarget): string {
  return [
    cliInstallHint(target.origin),
    `export PROMPTLOOP_URL=${target.origin}`,
    '# every prompt of the organization, archived ones included, in one bundle',
    cli(target, 'export --out prompts.promptloop.json'),
    '# one prompt',
    cli(target, 'export --prompt prm_… --out support-reply.promptloop.json'),
    '# the same over HTTP: pages of 25 prompts; follow nextCursor with ?cursor=… until it is null',
    `curl -s '${target.origin}/api/v1/organizations/${target.organizationId}/export' -H "Authorization: Bearer $ACCESS_TOKEN"`,
  ].join('\n');
}

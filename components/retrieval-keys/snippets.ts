import { extractVariables } from '@/lib/templates';
import { sdkInstallHint } from '@/lib/install-hints';

// Copy-paste examples for GET /api/v1/prompts/{promptId} with a retrieval key (plr_…).
// Without a fresh secret, the examples read the key from PROMPTLOOP_RETRIEVAL_KEY.

type ExampleContent = { inputType: string; messages: { content: string }[] } | null;

// What compile() takes for this prompt: { input } for a user-message prompt, else its variables.
function compileArguments(content: ExampleContent): string {
  if (!content) return '{ /* the variables of the production version */ }';
  if (content.inputType === 'user_message') return "{ input: 'Hello!' }";
  const names = extractVariables(content.messages);
  if (!names.length) return '{}';
  return `{ ${names.map((name) => `${name}: '…'`).join(', ')} }`;
}

// `labels`: the prompt's labels, so the second example names one it has (another than production),
// or else an exact version (a label it lacks would answer 404 label_not_assigned when pasted).
export function curlSnippet(
  origin: string,
  promptId: string,
  secret: string | null,
  labels: { label: string; version: number | null }[] = [],
): string {
  const url = `${origin}/api/v1/prompts/${promptId}`;
  const auth = secret ? `'Authorization: Bearer ${secret}'` : '"Authorization: Bearer $PROMPTLOOP_RETRIEVAL_KEY"';
  const other = labels.find((label) => label.label !== 'production');
  const version = labels.find((label) => label.label === 'production')?.version ?? 1;
  const second = other
    ? ['# Another label (or ?version=N for an exact version)', `curl '${url}?label=${other.label}' \\`]
    : ['# An exact version (or ?label=<name> for another label)', `curl '${url}?version=${version}' \\`];
  return [
    '# The version the production label points at',
    `curl '${url}' \\`,
    `  -H ${auth}`,
    '',
    ...second,
    `  -H ${auth}`,
    '',
    '# Revalidate: 304 Not Modified while the ETag still matches. Promptloop-Subject (your end',
    "# user's id) keeps a traffic-split label on one version per user; without it each call draws.",
    `curl -i '${url}' \\`,
    `  -H ${auth} \\`,
    `  -H 'Promptloop-Subject: user-42' \\`,
    `  -H 'If-None-Match: "<ETag of the last response>"'`,
  ].join('\n');
}

export function typescriptSnippet(
  origin: string,
  promptId: string,
  secret: string | null,
  content: ExampleContent,
): string {
  const apiKey = secret
    ? `process.env.PROMPTLOOP_RETRIEVAL_KEY ?? '${secret}'`
    : 'process.env.PROMPTLOOP_RETRIEVAL_KEY!';
  return `${sdkInstallHint(origin)}
import { Promptloop } from '@promptloop/sdk';

// Keep the key in your secret store, e.g. PROMPTLOOP_RETRIEVAL_KEY.
const pl = new Promptloop({ baseUrl: '${origin}', apiKey: ${apiKey} });

// Revalidated with If-None-Match on every call: a label move counts from the next request.
// \`subject\` (your end user's id) keeps a traffic-split label on one version per user.
const prompt = await pl.getPrompt('${promptId}', { label: 'production', subject: 'user-42' });
const { messages, model } = prompt.compile(${compileArguments(content)});`;
}

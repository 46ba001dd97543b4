// Copy-paste examples for retrieving a split label with a sticky subject (API.md "Traffic splits").
// Without a secret on screen, the examples read the retrieval key from PROMPTLOOP_RETRIEVAL_KEY.
import { shellQuote } from '@/lib/shell-quote';
import { sdkInstallHint } from '@/lib/install-hints';

function quoted(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

export function splitCurlSnippet(origin: string, promptId: string, label: string, subject: string): string {
  const url = `${origin}/api/v1/prompts/${promptId}?label=${encodeURIComponent(label)}`;
  return [
    `# The same subject gets the same version of "${label}" for as long as the split is unchanged`,
    `curl '${url}' \\`,
    '  -H "Authorization: Bearer $PROMPTLOOP_RETRIEVAL_KEY" \\',
    `  -H ${shellQuote(`Promptloop-Subject: ${subject}`)}`,
    '',
    '# The body names the version chosen and the split: "split": { "id": "spl_…", "weight": 10 }',
  ].join('\n');
}

export function splitTypescriptSnippet(origin: string, promptId: string, label: string, subject: string): string {
  return `${sdkInstallHint(origin)}
import { Promptloop } from '@promptloop/sdk';

const pl = new Promptloop({ baseUrl: '${quoted(origin)}', apiKey: process.env.PROMPTLOOP_RETRIEVAL_KEY! });

// Pass a stable id of your end user (or session) as the subject: each one keeps the version the
// split gave it, so a conversation never flips between versions. Without a subject every call draws.
const prompt = await pl.getPrompt('${quoted(promptId)}', { label: '${quoted(label)}', subject: '${quoted(subject)}' });
console.log(prompt.version); // the version this subject was given`;
}

import path from 'node:path';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { CliError, exitCodes } from './exit';
import { assertWritable, shownPath, writeFileAtomically } from './files';

// `promptloop export`: the lossless bundle (API.md "Moving prompts in and out") of some prompts or
// of the whole organization, as ONE file: the organization's pages (GET …/export?cursor=) are
// followed and merged, so the file imports back with `promptloop import promptloop FILE`.

/** What the CLI reads of a bundle; prompts are carried through untouched. */
export type Bundle = { format: string; formatVersion: number; exportedAt: string; prompts: unknown[] };
type BundlePage = Bundle & { nextCursor: string | null };

/** One bundle from several: the prompts in order, the format and exportedAt of the first. */
export function mergeBundles(bundles: Bundle[]): Bundle {
  const [first] = bundles;
  return {
    format: first.format,
    formatVersion: first.formatVersion,
    exportedAt: first.exportedAt,
    prompts: bundles.flatMap((bundle) => bundle.prompts),
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

async function exportOrganization(ctx: Context, organizationId: string): Promise<Bundle[]> {
  const pages: Bundle[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let count = 0;
  for (;;) {
    const answer = await ctx.api.request('GET', `/organizations/${encodeURIComponent(organizationId)}/export`, {
      query: { cursor },
    });
    const { nextCursor, ...bundle } = answer.body as BundlePage;
    pages.push(bundle);
    count += bundle.prompts.length;
    if (!nextCursor) break;
    ctx.err(`exported ${plural(count, 'prompt')}…`);
    // A cursor that comes back would loop forever: the server would be at fault, so stop loudly.
    if (seen.has(nextCursor))
      throw new CliError(`The export returned the cursor ${nextCursor} twice; stopped.`, exitCodes.apiError);
    seen.add(nextCursor);
    cursor = nextCursor;
  }
  return pages;
}

export const exportCommand: Command = {
  path: ['export'],
  summary: 'Export prompts as one bundle file (versions, labels, scoring, dataset): one prompt, or the organization',
  description: [
    'Without --prompt, every prompt of the organization (archived ones included): the pages of GET /organizations/{org}/export',
    'are followed and merged into one bundle (exportedAt of the first page). The file is written through a temporary file and',
    'a rename; without --out the bundle goes to stdout. Import it elsewhere with `promptloop import promptloop FILE`.',
  ].join(' '),
  positionals: [],
  flags: [
    { name: 'prompt', kind: 'list', placeholder: 'promptId', description: 'Export this prompt only.' },
    { name: 'out', kind: 'string', placeholder: 'file', description: 'Write the bundle here (default: stdout).' },
    {
      name: 'org',
      kind: 'string',
      placeholder: 'organizationId',
      description: 'Organization (default: the saved context, else your account default).',
    },
  ],
  examples: [
    'promptloop export --out prompts.bundle.json',
    'promptloop export --prompt prm_abc --prompt prm_def > two.bundle.json',
  ],
  async run(ctx, parsed) {
    const f = parsed.flags;
    const organizationId = await resolveOrganization(ctx, f.org);
    const promptIds = (f.prompt as string[] | undefined) ?? [];
    // A path that cannot be written is said before the whole organization is downloaded.
    if (typeof f.out === 'string') assertWritable(path.resolve(f.out));
    const bundles: Bundle[] = [];
    if (promptIds.length)
      for (const promptId of promptIds) {
        const answer = await ctx.api.request(
          'GET',
          `/organizations/${encodeURIComponent(organizationId)}/prompts/${encodeURIComponent(promptId)}/export`,
        );
        bundles.push(answer.body as Bundle);
      }
    else bundles.push(...(await exportOrganization(ctx, organizationId)));
    const bundle = mergeBundles(bundles);
    const text = `${JSON.stringify(bundle, null, 2)}\n`;
    if (typeof f.out !== 'string') {
      process.stdout.write(text);
      ctx.err(`Exported ${plural(bundle.prompts.length, 'prompt')}.`);
      return;
    }
    const out = path.resolve(f.out);
    writeFileAtomically(out, text);
    ctx.out(
      ctx.json
        ? JSON.stringify({ out, prompts: bundle.prompts.length, bytes: Buffer.byteLength(text) }, null, 2)
        : `Exported ${plural(bundle.prompts.length, 'prompt')} to ${shownPath(out)}.`,
    );
  },
};

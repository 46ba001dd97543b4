import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from './fixtures';

// Without SMTP_URL the server writes each email to .data/outbox/ (one JSON file per message).
const outbox = path.resolve('.data', 'outbox');

export async function linkFromOutbox(to: string, pathname: string, exclude: string[] = []): Promise<string> {
  let found: string | undefined;
  await expect
    .poll(
      async () => {
        for (const name of await readdir(outbox).catch(() => [] as string[])) {
          if (!name.endsWith('.json')) continue;
          const message = JSON.parse(await readFile(path.join(outbox, name), 'utf8')) as { to: string; text: string };
          if (message.to !== to) continue;
          const link = message.text
            .match(/https?:\/\/\S+/g)
            ?.find((l) => new URL(l).pathname === pathname && !exclude.includes(l));
          if (link) found = link;
        }
        return found;
      },
      { message: `an email to ${to} with a ${pathname} link` },
    )
    .toBeTruthy();
  return found!;
}

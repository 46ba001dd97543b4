// The versions a picker offers (pure, so it can be tested): the pages of the version list loaded so
// far, newest first, plus the versions found by number beyond them. Every version picker on the
// Versions page reads these, so any version of the prompt can be chosen, not only the loaded ones.

export type VersionChoice = { id: string; number: number; labels: string[] };

// The select's own options besides the versions (a version id never looks like these).
export const loadOlderOption = '__load_older';
export const byNumberOption = '__by_number';

/** The loaded versions and the ones found by number, each once, newest first. */
export function mergeChoices<V extends VersionChoice>(loaded: V[], found: V[]): V[] {
  const byId = new Map<string, V>();
  // A loaded page is the fresher copy (its labels come with the list).
  for (const version of [...found, ...loaded]) byId.set(version.id, version);
  return [...byId.values()].sort((a, b) => b.number - a.number);
}

/** What someone typed in "Version number": a whole number ≥ 1 ("v3" and "3" alike), or what is wrong. */
export function parseVersionNumber(text: string): { number: number; error: null } | { number: null; error: string } {
  const trimmed = text.trim().replace(/^v/i, '');
  if (!trimmed) return { number: null, error: 'Type a version number, e.g. 1.' };
  if (!/^\d+$/.test(trimmed) || Number(trimmed) < 1 || !Number.isSafeInteger(Number(trimmed)))
    return { number: null, error: 'A version number is a whole number from 1, e.g. 1 or v1.' };
  return { number: Number(trimmed), error: null };
}

/** The error shown next to "Version number" when the prompt has no such version. */
export function missingVersionText(number: number, newest: number | undefined): string {
  return newest === undefined || number <= newest
    ? `This prompt has no v${number}.`
    : `This prompt has no v${number}: its newest version is v${newest}.`;
}

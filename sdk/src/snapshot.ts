import { isRetrievedPrompt, type RetrievedPrompt } from './prompt.js';

/**
 * Which version to retrieve: a label (default `production`) or an exact version number, never both.
 * `subject` (1 to 200 characters, e.g. your user's or session's id) is sent as `Promptloop-Subject`:
 * on a label with a traffic split, the same subject gets the same version for as long as the split
 * is unchanged (without one, each request draws at random).
 */
export type Selector =
  { label?: string; version?: never; subject?: string } | { version: number; label?: never; subject?: string };

/**
 * A fallback snapshot: retrieved prompts kept next to the application for cold starts when the
 * service cannot be reached. `promptloop pull` writes this format; `client.snapshot()` builds one
 * from what the client has retrieved.
 *
 * ```json
 * { "version": 1,
 *   "prompts": { "prm_…": { "label:production": { "promptId": "prm_…", "name": "…", "versionId": "ver_…",
 *                                                 "version": 3, "label": "production", "content": {…}, "createdAt": "…" },
 *                           "version:2": { …, "label": null } } } }
 * ```
 * Selector keys are `label:<label>` or `version:<n>`; a call without a selector is `label:production`.
 * Each entry is the RetrievedPrompt body exactly as the API returned it.
 */
export type Snapshot = {
  version?: 1;
  prompts: Record<string, Record<string, RetrievedPrompt>>;
};

const defaultLabel = 'production';

/** The snapshot key of a selector: `label:production`, `label:staging`, `version:3` (the subject is not part of it). */
export function selectorKey(selector: Selector = {}): string {
  if (selector.version !== undefined) return `version:${selector.version}`;
  return `label:${selector.label ?? defaultLabel}`;
}

/**
 * Checks a snapshot (the parsed object, or the JSON text of a file) and returns it typed; throws a TypeError
 * naming the first entry that is not a RetrievedPrompt of the promptId it is filed under.
 */
export function parseSnapshot(input: unknown): Snapshot {
  // The parsed object, or its JSON text (as read from a file).
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw new TypeError('A snapshot given as text must be JSON: { "version": 1, "prompts": { … } }.');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError('A snapshot is an object { version: 1, prompts: { … } }.');
  const { version, prompts } = value as Record<string, unknown>;
  if (version !== undefined && version !== 1)
    throw new TypeError(`Unknown snapshot version ${String(version)} (this SDK reads version 1).`);
  if (typeof prompts !== 'object' || prompts === null || Array.isArray(prompts))
    throw new TypeError('snapshot.prompts must be an object keyed by promptId.');
  for (const [promptId, entries] of Object.entries(prompts)) {
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries))
      throw new TypeError(`snapshot.prompts.${promptId} must be an object keyed by selector.`);
    for (const [key, entry] of Object.entries(entries)) {
      if (!/^(label:[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?|version:[1-9]\d*)$/.test(key))
        throw new TypeError(
          `snapshot.prompts.${promptId}: "${key}" is not a selector key (label:<label> or version:<n>).`,
        );
      if (!isRetrievedPrompt(entry) || entry.promptId !== promptId)
        throw new TypeError(`snapshot.prompts.${promptId}["${key}"] is not a retrieved prompt of ${promptId}.`);
    }
  }
  return { version: 1, prompts: prompts as Snapshot['prompts'] };
}

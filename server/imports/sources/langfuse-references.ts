// Langfuse prompt references (`@@@langfusePrompt:name=X|version=N@@@` or `…|label=L@@@`) resolved
// the way Langfuse resolves them (packages/shared/src/features/prompts/parsePromptDependencyTags.ts
// and PromptService in langfuse/langfuse): only text prompts can be referenced, a prompt never
// references its own name (circular), and nesting stops at 5 levels. Only prompts the document
// holds can be resolved; the result is capped at a message's length, so a document of references to
// references cannot build an unbounded string.

const tagPattern = /@@@langfusePrompt:(.*?)@@@/g;
const maxNesting = 5;
const maxChars = 100_000; // a message's limit: longer text would be refused anyway

// What the resolver needs to know of each prompt version of the document.
export type ReferenceTarget = { name: string; version: number; type: 'text' | 'chat'; labels: string[]; text: unknown };

type Resolved =
  | { ok: true; text: string; height: number; names: Set<string>; notes: string[] }
  // `cause`: the innermost reason, so a failure deep in a chain is told once, not once per level.
  | { ok: false; reason: string; cause: string };

const failure = (reason: string): Resolved => ({ ok: false, reason, cause: reason });

type Tag = { name: string; version: number } | { name: string; label: string };

// Langfuse's own reading: exactly two `|`-separated parts, `name=` first, then `version=` or `label=`.
function parseTag(inner: string): Tag | null {
  const parts = inner.split('|');
  if (parts.length !== 2 || !parts[0].startsWith('name=')) return null;
  const name = parts[0].slice('name='.length);
  const [key, value] = parts[1].split('=');
  if (name === '' || value === undefined || value === '') return null;
  if (key === 'version') {
    const version = Number(value);
    return Number.isInteger(version) && version >= 1 ? { name, version } : null;
  }
  return key === 'label' ? { name, label: value } : null;
}

export class ReferenceResolver {
  private readonly done = new Map<ReferenceTarget, Resolved>();

  constructor(private readonly byName: ReadonlyMap<string, ReadonlyMap<number, ReferenceTarget>>) {}

  /**
   * `text` (a string of the prompt named `owner`) with every reference replaced by the referenced
   * text prompt's text, and one note per replacement; or why it cannot be resolved.
   */
  resolve(text: string, owner: string): { text: string; notes: string[] } | { reason: string } {
    const resolved = this.resolveText(text, [owner]);
    return resolved.ok ? { text: resolved.text, notes: resolved.notes } : { reason: resolved.reason };
  }

  private find(tag: Tag): ReferenceTarget | undefined {
    const versions = this.byName.get(tag.name);
    if (!versions) return undefined;
    if ('version' in tag) return versions.get(tag.version);
    const labelled = [...versions.values()].find((target) => target.labels.includes(tag.label));
    // `latest` is implicit in an export that dropped it: the highest version holds it.
    if (labelled || tag.label !== 'latest') return labelled;
    return [...versions.values()].reduce((top, target) => (target.version > top.version ? target : top));
  }

  private resolveText(text: string, chain: string[]): Resolved {
    let out = '';
    let last = 0;
    let height = 0;
    const names = new Set<string>();
    const notes: string[] = [];
    for (const match of text.matchAll(tagPattern)) {
      out += text.slice(last, match.index);
      last = match.index + match[0].length;
      const tag = parseTag(match[1]);
      if (!tag) {
        out += match[0];
        notes.push(`${match[0]} is not a reference Langfuse resolves: it was kept as written`);
        continue;
      }
      const target = this.find(tag);
      if (!target) return failure(`${match[0]} refers to a prompt version this document does not hold.`);
      if (target.type !== 'text')
        return failure(`${match[0]} refers to a chat prompt: Langfuse resolves references to text prompts only.`);
      const inner = this.targetText(target, chain);
      if (!inner.ok) return { ok: false, reason: `${match[0]} cannot be resolved: ${inner.cause}`, cause: inner.cause };
      if (out.length + inner.text.length > maxChars)
        return failure(`Resolving ${match[0]} makes the text longer than ${maxChars} characters.`);
      out += inner.text;
      height = Math.max(height, inner.height + 1);
      for (const name of inner.names) names.add(name);
      notes.push(...inner.notes, `${match[0]} was replaced by the text of “${target.name}” version ${target.version}`);
    }
    out += text.slice(last);
    if (out.length > maxChars) return failure(`The text is longer than ${maxChars} characters.`);
    return { ok: true, text: out, height, names, notes };
  }

  // A referenced text prompt's own text, resolved once and reused (successes do not depend on the chain).
  private targetText(target: ReferenceTarget, chain: string[]): Resolved {
    if (chain.includes(target.name)) return failure(`“${target.name}” is referenced in a circle.`);
    let resolved = this.done.get(target);
    // Checked before descending too, so a long chain of references never recurses deeply.
    if (!resolved && chain.length >= maxNesting) return failure(`References nest deeper than ${maxNesting} levels.`);
    if (!resolved) {
      resolved =
        typeof target.text === 'string'
          ? this.resolveText(target.text, [...chain, target.name])
          : failure(`“${target.name}” version ${target.version} has no text.`);
      if (!resolved.ok) return resolved;
      resolved.names.add(target.name);
      this.done.set(target, resolved);
    }
    if (!resolved.ok) return resolved;
    if (chain.some((name) => resolved.names.has(name))) return failure(`“${target.name}” is referenced in a circle.`);
    // Langfuse counts the top string as level 0 and refuses a prompt at level 5.
    if (chain.length + resolved.height >= maxNesting)
      return failure(`References nest deeper than ${maxNesting} levels.`);
    return resolved;
  }
}

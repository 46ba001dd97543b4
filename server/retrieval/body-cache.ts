// Exact versions are immutable (spec: Versioning 4), so the serialized end of a retrieval body —
// `"content":…,"createdAt":"…"}` — is kept per version id in a bounded LRU and never goes stale.
// Nothing mutable is cached here: the key, the prompt's name and what a label points at are read
// from the database on every request (server/retrieval/query.ts).

export type VersionBody = { versionId: string; tail: string; bytes: number };

const maxBytes = Number(process.env.RETRIEVAL_BODY_CACHE_BYTES ?? 64 * 1024 * 1024);
const maxSelectors = 50_000;

const bodies = new Map<string, VersionBody>();
let totalBytes = 0;

// The version last served per (prompt, selector): only a hint for the statement to skip the content
// of that version when it still resolves there; the database decides which version is served.
const lastServed = new Map<string, string>();

export function selectorKey(promptId: string, selector: string): string {
  return `${promptId}\u0000${selector}`;
}

// The cached body of the version this (prompt, selector) resolved to last time, if still held.
export function knownBody(key: string): VersionBody | null {
  const versionId = lastServed.get(key);
  if (versionId === undefined) return null;
  const body = bodies.get(versionId);
  if (!body) return null;
  // Least recently used goes first: a hit moves the entry to the end of the Map's order.
  bodies.delete(versionId);
  bodies.set(versionId, body);
  return body;
}

export function rememberServed(key: string, versionId: string): void {
  if (lastServed.get(key) === versionId) return;
  if (lastServed.size >= maxSelectors) lastServed.clear();
  lastServed.set(key, versionId);
}

// Builds (once per version) the immutable tail from the database's jsonb text and timestamp.
export function storeBody(versionId: string, contentText: string, createdAt: string): VersionBody {
  const existing = bodies.get(versionId);
  if (existing) return existing;
  // jsonb's text form spaces its separators; re-serialize once so bodies match the management API's.
  const tail = `"content":${JSON.stringify(JSON.parse(contentText))},"createdAt":${JSON.stringify(createdAt)}}`;
  const body: VersionBody = { versionId, tail, bytes: tail.length * 2 + versionId.length * 2 + 64 };
  bodies.set(versionId, body);
  totalBytes += body.bytes;
  for (const [id, entry] of bodies) {
    if (totalBytes <= maxBytes || bodies.size <= 1) break;
    bodies.delete(id);
    totalBytes -= entry.bytes;
  }
  return body;
}

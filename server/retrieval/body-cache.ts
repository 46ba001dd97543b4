// Exact versions are immutable (spec: Versioning 4), so the serialized end of a retrieval body —
// `"content":…,"createdAt":"…"}` — is kept per version id in a bounded LRU and never goes stale.
// Nothing mutable is kept here: the key, the prompt's name and what a label points at come from the
// lookup (server/retrieval/query.ts) or from an answer kept until a change (answer-cache.ts).

export type VersionBody = { versionId: string; tail: string; bytes: number };

const maxBytes = Number(process.env.RETRIEVAL_BODY_CACHE_BYTES ?? 64 * 1024 * 1024);
const maxSelectors = 50_000;

const bodies = new Map<string, VersionBody>();
let totalBytes = 0;

// The versions last served per (prompt, selector), most recent first: only a hint for the statement
// to skip the content of a version whose body is held here; the database decides which version is
// served. Several, so that a split label (2–4 versions) does not ship content on every other request.
const lastServed = new Map<string, string[]>();
const servedPerSelector = 4;

export function selectorKey(promptId: string, selector: string): string {
  return `${promptId}\u0000${selector}`;
}

// The cached bodies of the versions this (prompt, selector) resolved to lately, those still held.
export function knownBodies(key: string): VersionBody[] {
  const versionIds = lastServed.get(key);
  if (versionIds === undefined) return [];
  const held: VersionBody[] = [];
  for (const versionId of versionIds) {
    const body = bodies.get(versionId);
    if (body) held.push(body);
  }
  return held;
}

// The body served for (prompt, selector): remembered, and moved to the recently used end of the LRU.
export function rememberServed(key: string, body: VersionBody): void {
  if (bodies.get(body.versionId) === body) {
    bodies.delete(body.versionId);
    bodies.set(body.versionId, body);
  }
  const versionIds = lastServed.get(key);
  if (versionIds?.[0] === body.versionId) return;
  if (versionIds === undefined) {
    if (lastServed.size >= maxSelectors) lastServed.clear();
    lastServed.set(key, [body.versionId]);
    return;
  }
  const at = versionIds.indexOf(body.versionId);
  if (at !== -1) versionIds.splice(at, 1);
  else if (versionIds.length >= servedPerSelector) versionIds.pop();
  versionIds.unshift(body.versionId);
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

// The one canonical JSON: object keys sorted (recursively), so equal values serialize, and digest,
// equally. Idempotency request digests and evaluation snapshot digests are stored and compared
// later: this algorithm must not change (tests/unit/canonical-json.test.ts pins digests of both).
// Keys whose value is undefined are left out, as JSON.stringify leaves them out anyway.
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .filter((k) => record[k] !== undefined)
        .map((k) => [k, canonical(record[k])]),
    );
  }
  return value;
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

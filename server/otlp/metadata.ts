import { nestsDeeperThan } from '../input-hygiene';
import type { Attributes } from './attributes';

// metadataJson of an OTLP span (API.md): otel.scope.name and otel.span.kind first, then every span
// attribute no rule read (names as sent), then other resource attributes as resource.<name> (resource.ts);
// at most 64 keys and 16 KiB, an entry that does not fit is dropped and omitted lists "metadata".

const maxMetadataKeys = 64;
const maxMetadataBytes = 16 * 1024;
const maxMetadataDepth = 32;
const otelSpanKinds = ['', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

export function metadataText(entries: [string, unknown][], omitted: Set<string>): string | undefined {
  const kept: string[] = [];
  const seen = new Set<string>();
  let bytes = 2; // "{}"
  for (const [key, value] of entries) {
    if (seen.has(key)) continue;
    seen.add(key);
    // Past the key limit nothing more is kept: no need to render the rest.
    if (kept.length >= maxMetadataKeys) {
      omitted.add('metadata');
      continue;
    }
    const entry = `${JSON.stringify(key)}:${JSON.stringify(value ?? null)}`;
    const size = Buffer.byteLength(entry, 'utf8') + (kept.length ? 1 : 0);
    if (bytes + size > maxMetadataBytes || nestsDeeperThan(value, maxMetadataDepth - 1)) {
      omitted.add('metadata');
      continue;
    }
    kept.push(entry);
    bytes += size;
  }
  return kept.length ? `{${kept.join(',')}}` : undefined;
}

/** The entries in the order they are kept. */
export function metadataEntries(
  attributes: Attributes,
  resourceEntries: [string, unknown][],
  scopeName: string | undefined,
  kind: number | undefined,
  statusMessage: string | undefined,
): [string, unknown][] {
  const entries: [string, unknown][] = [];
  if (scopeName) entries.push(['otel.scope.name', scopeName]);
  const otelKind = typeof kind === 'number' ? otelSpanKinds[kind] : undefined;
  if (otelKind) entries.push(['otel.span.kind', otelKind]);
  if (statusMessage) entries.push(['otel.status.message', statusMessage]);
  for (const [key, value] of attributes.values) if (!attributes.used.has(key)) entries.push([key, value]);
  return resourceEntries.length ? entries.concat(resourceEntries) : entries;
}

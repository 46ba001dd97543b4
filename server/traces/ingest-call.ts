// How the ingestion functions (ingest_spans, ingest_otlp_spans, ingest_groups) are called and how
// they refuse.
//
// Their arguments: the rows
// as JSON without their contentJson and metadataJson, and those texts in two arrays of slots (the
// row with index i in slot i + 1, null elsewhere). Each text travels as a parameter of its own, so
// it is never escaped into a JSON string here nor parsed out of one by the database.

/** A row as the functions' ingest_span type takes it; `i` is its text slot. */
export type TextRow = { i: number; traceId: string; spanId: string; contentJson?: string; metadataJson?: string };

type CallArguments = { rows: string; content: (string | null)[]; metadata: (string | null)[] };

/**
 * The rows as JSON without their texts, which go to slot `offset + i` of `content` and `metadata`
 * (a group's calls share those arrays, each from its own offset).
 */
export function slimRows(
  rows: TextRow[],
  offset: number,
  content: (string | null)[],
  metadata: (string | null)[],
): string {
  const slim = rows.map(({ contentJson, metadataJson, ...row }) => {
    if (contentJson !== undefined) content[offset + row.i] = contentJson;
    if (metadataJson !== undefined) metadata[offset + row.i] = metadataJson;
    return row;
  });
  return JSON.stringify(slim);
}

export function textArguments(rows: TextRow[], slotCount: number): CallArguments {
  const content: (string | null)[] = new Array(slotCount).fill(null);
  const metadata: (string | null)[] = new Array(slotCount).fill(null);
  return { rows: slimRows(rows, 0, content, metadata), content, metadata };
}

/** `$from, $from+1, …`: the placeholders of `count` slots. */
export const textSlots = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');

// The PT… code (and DETAIL) an ingestion function raised, wherever the driver wrapped it.
export function databaseError(error: unknown): { code?: string; detail?: string } {
  let current = error as { code?: unknown; detail?: unknown; cause?: unknown } | null;
  for (let depth = 0; current && depth < 4; depth++) {
    if (typeof current.code === 'string' && current.code.startsWith('PT'))
      return { code: current.code, detail: typeof current.detail === 'string' ? current.detail : undefined };
    current = current.cause as typeof current;
  }
  return {};
}

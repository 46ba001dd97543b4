// The rows of a span's attributes table (metadataJson): span attributes, resource attributes (stored
// as resource.<name>) and the OpenTelemetry fields we add (otel.*) in groups of their own; filtered
// and sorted here so the table component only renders. Pure and total on any JSON value.

export type AttributeRow = {
  /** The key as stored. */
  key: string;
  /** The key as shown in its group (resource attributes without the resource. prefix). */
  name: string;
  value: unknown;
  /** The value as one line of text, for showing, filtering and sorting. */
  text: string;
};

type AttributeGroup = { id: 'span' | 'resource' | 'otel'; title: string; rows: AttributeRow[] };

export type AttributeSort = { by: 'key' | 'value'; direction: 'ascending' | 'descending' };

const groupTitles: Record<AttributeGroup['id'], string> = {
  span: 'Span attributes',
  resource: 'Resource',
  otel: 'OpenTelemetry',
};

function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function groupOf(key: string): AttributeGroup['id'] {
  if (key.startsWith('resource.') && key.length > 'resource.'.length) return 'resource';
  if (key.startsWith('otel.')) return 'otel';
  return 'span';
}

/** The groups of a metadata object, in stored order, empty groups left out; null when it is not an object. */
export function attributeGroups(metadata: unknown): AttributeGroup[] | null {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return null;
  const groups: AttributeGroup[] = (['span', 'resource', 'otel'] as const).map((id) => ({
    id,
    title: groupTitles[id],
    rows: [],
  }));
  for (const key of Object.keys(metadata)) {
    const id = groupOf(key);
    const value = (metadata as Record<string, unknown>)[key];
    const name = id === 'resource' ? key.slice('resource.'.length) : key;
    groups.find((group) => group.id === id)!.rows.push({ key, name, value, text: valueText(value) });
  }
  return groups.filter((group) => group.rows.length > 0);
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Rows whose key or value contains the query (any case), sorted within each group; empty groups dropped. */
export function visibleAttributes(groups: AttributeGroup[], query: string, sort: AttributeSort): AttributeGroup[] {
  const needle = query.trim().toLowerCase();
  const sign = sort.direction === 'ascending' ? 1 : -1;
  const compare = (a: AttributeRow, b: AttributeRow) =>
    sign *
    (sort.by === 'key'
      ? collator.compare(a.name, b.name) || collator.compare(a.key, b.key)
      : collator.compare(a.text, b.text) || collator.compare(a.name, b.name));
  return groups
    .map((group) => ({
      ...group,
      rows: group.rows
        .filter((row) => !needle || row.key.toLowerCase().includes(needle) || row.text.toLowerCase().includes(needle))
        .sort(compare),
    }))
    .filter((group) => group.rows.length > 0);
}

type TreeSpan = { spanId: string; parentSpanId: string | null; startedAt: number };

export type SpanRow<S extends TreeSpan> = { span: S; depth: number; orphan: boolean; childCount: number };

const byStart = (a: TreeSpan, b: TreeSpan) => a.startedAt - b.startedAt || (a.spanId < b.spanId ? -1 : 1);

/**
 * Depth-first rows of the span tree, children in start order. The top level holds, in start order,
 * every span without a parent (OpenTelemetry allows several in a trace) and every span whose parent
 * has not arrived (an orphan: children often arrive before their root). A span on a parent cycle is
 * shown last, as an orphan.
 */
export function spanRows<S extends TreeSpan>(spans: S[]): SpanRow<S>[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, S[]>();
  for (const span of spans) {
    if (span.parentSpanId && ids.has(span.parentSpanId) && span.parentSpanId !== span.spanId) {
      const list = children.get(span.parentSpanId) ?? [];
      list.push(span);
      children.set(span.parentSpanId, list);
    }
  }
  const rows: SpanRow<S>[] = [];
  const visited = new Set<string>();
  const visit = (span: S, depth: number, orphan: boolean) => {
    if (visited.has(span.spanId)) return;
    visited.add(span.spanId);
    const kids = (children.get(span.spanId) ?? []).sort(byStart);
    rows.push({ span, depth, orphan, childCount: kids.length });
    for (const child of kids) visit(child, depth + 1, false);
  };
  const sorted = [...spans].sort(byStart);
  for (const span of sorted) {
    if (!span.parentSpanId) visit(span, 0, false);
    else if (!ids.has(span.parentSpanId)) visit(span, 0, true);
  }
  for (const span of sorted) visit(span, 0, true);
  return rows;
}

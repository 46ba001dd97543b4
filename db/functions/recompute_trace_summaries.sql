-- Sets the summary rows (traces) of the given traces to the aggregate of their stored spans, from
-- scratch. ingest_spans calls it for the traces where a batch changed a span in a way its deltas
-- cannot follow (startedAt, endedAt, kind, sessionId or endUserId changed, or a token or cost value
-- removed); the migration that created the table used it to backfill. The head is the root span
-- once it has arrived, else the earliest span by (startedAt, spanId).
CREATE OR REPLACE FUNCTION recompute_trace_summaries(p_org text, p_traces text[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO traces AS t (organization_id, trace_id, root_span_id, head_span_id, head_started_at, name, service, status,
    head_session_id, head_end_user_id, min_session_id, min_end_user_id, session_id, end_user_id, started_at, max_ended_at,
    running_count, span_count, input_tokens, output_tokens, cost_usd_nanos, kinds, keep_until)
  SELECT p_org, a.trace_id, a.root_span_id, h.span_id, h.started_at, h.name, h.service, h.status,
    h.session_id, h.end_user_id, a.min_session_id, a.min_end_user_id,
    coalesce(h.session_id, a.min_session_id), coalesce(h.end_user_id, a.min_end_user_id), a.started_at, a.max_ended_at,
    a.running_count, a.span_count, a.input_tokens, a.output_tokens, a.cost_usd_nanos, a.kinds, a.keep_until
  FROM (
    SELECT s.trace_id, s.keep_until, min(s.root_span_id) AS root_span_id,
      min(s.session_id) AS min_session_id, min(s.end_user_id) AS min_end_user_id,
      min(s.started_at) AS started_at, max(s.ended_at) AS max_ended_at,
      count(*) FILTER (WHERE s.status = 'running')::integer AS running_count, count(*)::integer AS span_count,
      sum(s.input_tokens)::bigint AS input_tokens, sum(s.output_tokens)::bigint AS output_tokens, sum(s.cost_usd_nanos)::bigint AS cost_usd_nanos,
      bit_or(span_kind_bit(s.kind)) AS kinds
    FROM spans s
    WHERE s.organization_id = p_org AND s.trace_id = ANY (p_traces)
    GROUP BY s.trace_id, s.keep_until
  ) a
  CROSS JOIN LATERAL (
    SELECT s.span_id, s.started_at, s.name, s.service, s.status, s.session_id, s.end_user_id
    FROM spans s WHERE s.organization_id = p_org AND s.trace_id = a.trace_id AND s.keep_until = a.keep_until
    ORDER BY (s.span_id = s.root_span_id) DESC, s.started_at, s.span_id LIMIT 1
  ) h
  ORDER BY a.trace_id
  ON CONFLICT (organization_id, trace_id, keep_until) DO UPDATE SET
    root_span_id = excluded.root_span_id, head_span_id = excluded.head_span_id, head_started_at = excluded.head_started_at,
    name = excluded.name, service = excluded.service, status = excluded.status, head_session_id = excluded.head_session_id,
    head_end_user_id = excluded.head_end_user_id, min_session_id = excluded.min_session_id, min_end_user_id = excluded.min_end_user_id,
    session_id = excluded.session_id, end_user_id = excluded.end_user_id, started_at = excluded.started_at, max_ended_at = excluded.max_ended_at,
    running_count = excluded.running_count, span_count = excluded.span_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, cost_usd_nanos = excluded.cost_usd_nanos, kinds = excluded.kinds
$$;

-- OTLP trace ingestion stores the spans of one request in one call (server/otlp/store.ts): one
-- round trip, one implicit transaction, all or nothing. An OTLP span is a finished snapshot with no
-- revision or root of its own, so the rules differ from ingest_spans':
-- - A span is named by its trace and span ids (OpenTelemetry's rule). One not stored yet is inserted
--   (revision 0); a stored one is replaced by a different snapshot (revision + 1, at most the spec's 1,000,000; never a conflict)
--   and left alone, unwritten, by an identical one (same digest; the digest leaves out revision and
--   rootSpanId).
-- - The root of a trace is its earliest parentless span by (startedAt, spanId) among all its stored
--   spans; until one has arrived, the parent of its earliest span (that parent is not stored, so it
--   is the best guess of the top). A trace that holds a span of the native API (from_otlp false) has
--   the root that span declares, and OTLP spans never move it: the native client's later revisions
--   must still match their stored identity. Every span of a trace gets that root and the trace's summary is
--   the aggregate of its spans, so the stored trace does not depend on the order in which its spans
--   arrived. A trace where nothing was written is not touched at all.
-- - A trace seen for the first time (the common case) gets root and summary from the request's rows
--   in the statement that inserts them; a trace stored before gets its root from all its spans and
--   its summary from recompute_trace_summaries afterwards.
-- The caller resolves the request first (server/otlp/store.ts): one row per (traceId, spanId) (the
-- last in request order wins), each with its digest and cost. Rows come as ingest_span (rootSpanId,
-- revs, digests and maxRunning stay empty): p_spans holds them without contentJson and metadataJson,
-- which travel in p_content[i + 1] and p_metadata[i + 1], one parameter each, as for ingest_spans.
-- It returns the key's organization and name (for the warning of a request with spans the mapping
-- rejected). Errors: PT401 key unknown or revoked, PT403 organization read-only.
-- Locks: the trace locks of ingest_spans (the same key, taken in the same order), so native and
-- OTLP writers of one trace take turns and never deadlock; rows are inserted in (traceId, spanId) order.
-- The statements that read a stored trace's spans run through EXECUTE (planned with the call's
-- values): no index leads with trace_id, and a generic plan cached while the table was small could
-- walk the organization's spans by start time; `started_at + 0` keeps that index's order out of it.
-- No JIT: recompute_trace_summaries' statement is planned generically, and its estimate for a grown
-- organization passed jit_above_cost, so each call compiled it (a quarter of the backend's time).
CREATE OR REPLACE FUNCTION ingest_otlp_spans(p_key_id text, p_spans json, p_content text[], p_metadata text[],
  OUT org_id text, OUT key_name text)
LANGUAGE plpgsql SET plan_cache_mode = auto SET enable_seqscan = off SET jit = off AS $$
DECLARE
  k record;
  v_in ingest_span[];
  v_stale text[];
  v_known text[];
  v_known_keep date[];
  v_keep date;
  -- received_at (the online-evaluation scanner's cursor, server/online/scanner.ts): the clock now,
  -- inside the call, so after this transaction shows in pg_stat_activity. A scanner pass that did not
  -- see it there read before this instant, so its bound is below every span stamped here. Rounded up
  -- to the column's milliseconds: the column would round to the nearest, and rounding down could put
  -- the stamp before this transaction's start, where a pass's bound may already be.
  v_received timestamptz := date_trunc('milliseconds', clock_timestamp() + interval '999 microseconds');
BEGIN
  SELECT ik.id, ik.name, ik.organization_id, ik.application, ik.environment, ik.last_used_at, o.read_only,
      (SELECT r.days FROM trace_retention r WHERE r.plan = o.plan) AS days
    INTO k
    FROM ingestion_keys ik JOIN organizations o ON o.id = ik.organization_id
    WHERE ik.id = p_key_id AND ik.revoked_at IS NULL;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'The ingestion key is unknown or revoked.' USING ERRCODE = 'PT401';
  END IF;
  IF k.read_only THEN
    RAISE EXCEPTION 'The organization is read-only.' USING ERRCODE = 'PT403';
  END IF;
  org_id := k.organization_id;
  key_name := k.name;

  v_in := ARRAY(SELECT e FROM json_populate_recordset(NULL::ingest_span, p_spans) e ORDER BY e."traceId", e."spanId");

  -- The trace locks of ingest_spans: same key, same order.
  PERFORM pg_advisory_xact_lock(hashtextextended(k.organization_id || '/' || x.t, 0))
    FROM (SELECT DISTINCT e."traceId" AS t FROM unnest(v_in) e ORDER BY 1) x;

  -- Partitions, as in ingest_spans: a new trace is kept until v_keep, a stored one keeps its own
  -- (found by one probe per partition of traces_trace_org_idx).
  v_keep := current_date + coalesce(k.days, 30);
  SELECT coalesce(array_agg(t.id), '{}'), coalesce(array_agg(st.keep_until), '{}') INTO v_known, v_known_keep
    FROM (SELECT DISTINCT e."traceId" AS id FROM unnest(v_in) e) t
    CROSS JOIN LATERAL (
      SELECT tr.keep_until FROM traces tr WHERE tr.trace_id = t.id AND tr.organization_id || '' = k.organization_id LIMIT 1
    ) st;
  WITH guess AS (
    -- Each trace's root by this request alone, the rule below applied to its spans here: exact for a
    -- trace none of whose spans was stored before, a first guess for the others.
    SELECT DISTINCT ON (e."traceId") e."traceId" AS trace_id,
      CASE WHEN e."parentSpanId" IS NULL THEN e."spanId" ELSE e."parentSpanId" END AS root
    FROM unnest(v_in) e
    ORDER BY e."traceId", e."parentSpanId" IS NOT NULL, e."startedAt", e."spanId"
  ), written AS (
    -- A replaced span keeps its stored root until the root update below.
    INSERT INTO spans AS s (organization_id, trace_id, span_id, root_span_id, parent_span_id, revision, name, service, kind, status,
      started_at, ended_at, session_id, end_user_id, provider, model, prompt_version_id, pricing_version, input_tokens,
      output_tokens, cost_usd_nanos, cost_source, content_json, metadata_json, omitted, snapshot_digest, ingestion_key_id,
      application, environment, keep_until, received_at, from_otlp)
    SELECT k.organization_id, e."traceId", e."spanId", g.root, e."parentSpanId", e."revision", e."name", e."service", e."kind", e."status",
      e."startedAt", e."endedAt", e."sessionId", e."endUserId", e."provider", e."model", e."promptVersionId", e."pricingVersion", e."inputTokens",
      e."outputTokens", e."costUsdNanos", e."costSource", p_content[e."i" + 1], p_metadata[e."i" + 1], e."omitted", e."digest", k.id,
      k.application, k.environment, coalesce(v_known_keep[array_position(v_known, e."traceId")], v_keep), v_received, true
    FROM unnest(v_in) e JOIN guess g ON g.trace_id = e."traceId"
    ORDER BY e."traceId", e."spanId"
    ON CONFLICT (organization_id, trace_id, span_id, keep_until) DO UPDATE SET
      parent_span_id = excluded.parent_span_id, revision = LEAST(s.revision + 1, 1000000), name = excluded.name, service = excluded.service,
      kind = excluded.kind, status = excluded.status, started_at = excluded.started_at, ended_at = excluded.ended_at,
      session_id = excluded.session_id, end_user_id = excluded.end_user_id, provider = excluded.provider, model = excluded.model,
      prompt_version_id = excluded.prompt_version_id, pricing_version = excluded.pricing_version, input_tokens = excluded.input_tokens,
      output_tokens = excluded.output_tokens, cost_usd_nanos = excluded.cost_usd_nanos, cost_source = excluded.cost_source,
      content_json = excluded.content_json, metadata_json = excluded.metadata_json, omitted = excluded.omitted,
      snapshot_digest = excluded.snapshot_digest, ingestion_key_id = excluded.ingestion_key_id, application = excluded.application,
      environment = excluded.environment, received_at = v_received
    WHERE s.snapshot_digest <> excluded.snapshot_digest
    RETURNING s.trace_id, s.span_id, s.root_span_id, s.name, s.service, s.kind, s.status, s.started_at, s.ended_at,
      s.session_id, s.end_user_id, s.input_tokens, s.output_tokens, s.cost_usd_nanos, s.keep_until
  ), fresh AS (
    -- Every stored span's trace has its summary row, so a trace without one has no spans but those
    -- just written: its summary is their aggregate, defined as in recompute_trace_summaries (kept in
    -- step with it; tests/integration/otlp-store.test.ts compares the two). A stored trace conflicts
    -- here and is recomputed below.
    INSERT INTO traces AS t (organization_id, trace_id, root_span_id, head_span_id, head_started_at, name, service, status,
      head_session_id, head_end_user_id, min_session_id, min_end_user_id, session_id, end_user_id, started_at, max_ended_at,
      running_count, span_count, input_tokens, output_tokens, cost_usd_nanos, kinds, keep_until)
    SELECT k.organization_id, a.trace_id, a.root_span_id, h.span_id, h.started_at, h.name, h.service, h.status,
      h.session_id, h.end_user_id, a.min_session_id, a.min_end_user_id,
      coalesce(h.session_id, a.min_session_id), coalesce(h.end_user_id, a.min_end_user_id), a.started_at, a.max_ended_at,
      a.running_count, a.span_count, a.input_tokens, a.output_tokens, a.cost_usd_nanos, a.kinds, a.keep_until
    FROM (
      SELECT w.trace_id, min(w.root_span_id) AS root_span_id, min(w.keep_until) AS keep_until,
        min(w.session_id) AS min_session_id, min(w.end_user_id) AS min_end_user_id,
        min(w.started_at) AS started_at, max(w.ended_at) AS max_ended_at,
        count(*) FILTER (WHERE w.status = 'running')::integer AS running_count, count(*)::integer AS span_count,
        sum(w.input_tokens)::bigint AS input_tokens, sum(w.output_tokens)::bigint AS output_tokens, sum(w.cost_usd_nanos)::bigint AS cost_usd_nanos,
        bit_or(span_kind_bit(w.kind)) AS kinds
      FROM written w
      GROUP BY w.trace_id
    ) a
    JOIN (
      SELECT DISTINCT ON (w.trace_id) w.trace_id, w.span_id, w.started_at, w.name, w.service, w.status, w.session_id, w.end_user_id
      FROM written w
      ORDER BY w.trace_id, (w.span_id = w.root_span_id) DESC, w.started_at, w.span_id
    ) h ON h.trace_id = a.trace_id
    ORDER BY a.trace_id
    ON CONFLICT (organization_id, trace_id, keep_until) DO NOTHING
    RETURNING t.trace_id
  )
  SELECT ARRAY(SELECT DISTINCT w.trace_id FROM written w WHERE NOT EXISTS (SELECT 1 FROM fresh f WHERE f.trace_id = w.trace_id) ORDER BY 1)
    INTO v_stale;

  IF cardinality(v_stale) > 0 THEN
    -- The traces stored before: each one's root over all its stored spans (once per trace;
    -- MATERIALIZED, else the subquery runs once per span), the root a native span declares first,
    -- then its summary from its spans.
    EXECUTE $q$
      WITH r AS MATERIALIZED (
        SELECT t.id, coalesce((
          SELECT n.root_span_id FROM spans n
          WHERE n.organization_id = $1 AND n.trace_id = t.id AND NOT n.from_otlp LIMIT 1
        ), (
          SELECT CASE WHEN p.parent_span_id IS NULL THEN p.span_id ELSE p.parent_span_id END
          FROM spans p WHERE p.organization_id = $1 AND p.trace_id = t.id
          ORDER BY p.parent_span_id IS NOT NULL, p.started_at + 0, p.span_id LIMIT 1
        )) AS root
        FROM unnest($2::text[]) t(id)
      )
      UPDATE spans s SET root_span_id = r.root
      FROM r WHERE s.organization_id = $1 AND s.trace_id = r.id AND s.root_span_id <> r.root
    $q$ USING k.organization_id, v_stale;
    PERFORM recompute_trace_summaries(k.organization_id, v_stale);
  END IF;

  -- last_used_at moves at most once a minute per key, as in ingest_spans.
  IF k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' THEN
    UPDATE ingestion_keys SET last_used_at = now()
      WHERE id = k.id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
  END IF;
END;
$$;

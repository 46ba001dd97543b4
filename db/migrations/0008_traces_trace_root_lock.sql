-- ingest_spans, third version: the same as 0007 plus a transaction-scoped advisory lock per trace
-- of the batch, taken before the trace-root probe, which closes the race of two first batches of one
-- trace naming different roots.
CREATE OR REPLACE FUNCTION ingest_spans(p_key_id text, p_spans json) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = auto AS $$
DECLARE
  k record;
  c record;
  v_in ingest_span[];
  v_done text[];
  v_rest text[];
BEGIN
  SELECT ik.id, ik.organization_id, ik.application, ik.environment, ik.last_used_at, o.read_only
    INTO k
    FROM ingestion_keys ik JOIN organizations o ON o.id = ik.organization_id
    WHERE ik.id = p_key_id AND ik.revoked_at IS NULL;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'The ingestion key is unknown or revoked.' USING ERRCODE = 'PT401';
  END IF;
  IF k.read_only THEN
    RAISE EXCEPTION 'The organization is read-only.' USING ERRCODE = 'PT403';
  END IF;

  -- Sorted by span id: every batch inserts and locks in the same order, so batches never deadlock.
  v_in := ARRAY(SELECT e FROM json_populate_recordset(NULL::ingest_span, p_spans) e ORDER BY e."spanId");

  -- Batches naming the same trace take its lock (in trace order, so never a deadlock) before the
  -- root probe: a concurrent first batch of the trace has committed its root by then, so two
  -- batches can never store two roots for one trace.
  PERFORM pg_advisory_xact_lock(hashtextextended(k.organization_id || '/' || x.t, 0))
    FROM (SELECT DISTINCT e."traceId" AS t FROM unnest(v_in) e ORDER BY 1) x;

  -- All spans of a trace share one root. Spans already stored for a trace are consistent with each
  -- other, so one stored span per trace is enough to compare with.
  SELECT t."i", t."traceId", t."spanId" INTO c
    FROM (SELECT DISTINCT ON (e."traceId") e."i", e."traceId", e."spanId", e."rootSpanId" FROM unnest(v_in) e ORDER BY e."traceId", e."i") t
    WHERE stored_trace_root(k.organization_id, t."traceId") <> t."rootSpanId"
    ORDER BY t."i" LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'The span names another root than the trace already stored.' USING ERRCODE = 'PT409',
      DETAIL = json_build_object('state', 'identity_changed', 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId")::text;
  END IF;

  WITH written AS (
    INSERT INTO spans AS s (organization_id, trace_id, span_id, root_span_id, parent_span_id, revision, name, service, kind, status,
      started_at, ended_at, session_id, end_user_id, provider, model, prompt_version_id, pricing_version, input_tokens,
      output_tokens, cost_usd_nanos, cost_source, content_json, metadata_json, omitted, snapshot_digest, ingestion_key_id,
      application, environment)
    SELECT k.organization_id, e."traceId", e."spanId", e."rootSpanId", e."parentSpanId", e."revision", e."name", e."service", e."kind", e."status",
      e."startedAt", e."endedAt", e."sessionId", e."endUserId", e."provider", e."model", e."promptVersionId", e."pricingVersion", e."inputTokens",
      e."outputTokens", e."costUsdNanos", e."costSource", e."contentJson", e."metadataJson", e."omitted", e."digest", k.id,
      k.application, k.environment
    FROM unnest(v_in) e ORDER BY e."spanId"
    ON CONFLICT (span_id, organization_id) DO UPDATE SET
      revision = excluded.revision, name = excluded.name, service = excluded.service, kind = excluded.kind, status = excluded.status,
      started_at = excluded.started_at, ended_at = excluded.ended_at, session_id = excluded.session_id, end_user_id = excluded.end_user_id,
      provider = excluded.provider, model = excluded.model, prompt_version_id = excluded.prompt_version_id, pricing_version = excluded.pricing_version,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd_nanos = excluded.cost_usd_nanos,
      cost_source = excluded.cost_source, content_json = excluded.content_json, metadata_json = excluded.metadata_json, omitted = excluded.omitted,
      snapshot_digest = excluded.snapshot_digest, ingestion_key_id = excluded.ingestion_key_id, application = excluded.application,
      environment = excluded.environment, received_at = now()
    WHERE excluded.revision > s.revision
      AND s.trace_id = excluded.trace_id AND s.root_span_id = excluded.root_span_id
      AND s.parent_span_id IS NOT DISTINCT FROM excluded.parent_span_id
      AND NOT EXISTS (
        SELECT 1 FROM unnest(v_in) e
        WHERE e."spanId" = excluded.span_id
          AND ((s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)])
            OR (s.status <> 'running' AND e."maxRunning" > s.revision))
      )
    RETURNING s.span_id
  )
  SELECT coalesce(array_agg(span_id), '{}') INTO v_done FROM written;

  IF cardinality(v_done) < cardinality(v_in) THEN
    v_rest := ARRAY(SELECT e."spanId" FROM unnest(v_in) e WHERE NOT e."spanId" = ANY (v_done));
    EXECUTE $q$
      SELECT e."i", e."traceId", e."spanId", s.revision AS stored,
        CASE
          WHEN s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)] THEN 'revision_conflict'
          WHEN e."revision" > s.revision AND (s.trace_id <> e."traceId" OR s.root_span_id <> e."rootSpanId" OR s.parent_span_id IS DISTINCT FROM e."parentSpanId") THEN 'identity_changed'
          ELSE 'reopened'
        END AS state
      FROM spans s
      JOIN unnest($1) e ON e."spanId" = s.span_id
      WHERE s.span_id = ANY ($2) AND s.organization_id = $3
        AND (
          (s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)])
          OR (e."revision" > s.revision AND (s.trace_id <> e."traceId" OR s.root_span_id <> e."rootSpanId" OR s.parent_span_id IS DISTINCT FROM e."parentSpanId"))
          OR (s.status <> 'running' AND e."maxRunning" > s.revision)
        )
      ORDER BY e."i" LIMIT 1
    $q$ INTO c USING v_in, v_rest, k.organization_id;
    IF c.state IS NOT NULL THEN -- EXECUTE does not set FOUND
      RAISE EXCEPTION 'The span conflicts with its stored state.' USING ERRCODE = 'PT409',
        DETAIL = json_build_object('state', c.state, 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId", 'storedRevision', c.stored)::text;
    END IF;
  END IF;

  -- last_used_at moves at most once a minute per key, so busy keys do not write on every batch.
  IF k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' THEN
    UPDATE ingestion_keys SET last_used_at = now()
      WHERE id = k.id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
  END IF;
END;
$$;

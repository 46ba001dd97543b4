-- Trace ingestion stores a whole batch in one call of ingest_spans (one round trip, one implicit
-- transaction): a raised error rolls the batch back, so a rejected batch stores nothing.
-- One element per distinct span of the batch: its highest-revision snapshot, plus every revision
-- and digest the batch carried for that span and the highest revision that was still running.
CREATE TYPE ingest_span AS (
  "i" integer,
  "traceId" text,
  "spanId" text,
  "rootSpanId" text,
  "parentSpanId" text,
  "revision" integer,
  "name" text,
  "service" text,
  "kind" text,
  "status" text,
  "startedAt" bigint,
  "endedAt" bigint,
  "sessionId" text,
  "endUserId" text,
  "provider" text,
  "model" text,
  "promptVersionId" text,
  "pricingVersion" text,
  "inputTokens" bigint,
  "outputTokens" bigint,
  "costUsdNanos" bigint,
  "costSource" text,
  "contentJson" text,
  "metadataJson" text,
  "omitted" text[],
  "digest" text,
  "revs" integer[],
  "digests" text[],
  "maxRunning" integer
);
--> statement-breakpoint
-- The root of a stored trace (any of its spans names it). Sorting is switched off so that the
-- planner walks the primary key even before the table has statistics (a new database would
-- otherwise scan every span of the organization through another index).
CREATE OR REPLACE FUNCTION stored_trace_root(p_org text, p_trace text) RETURNS text
LANGUAGE sql STABLE SET enable_sort = off AS $$
  SELECT s.root_span_id FROM spans s WHERE s.organization_id = p_org AND s.trace_id = p_trace
  ORDER BY s.organization_id, s.trace_id, s.span_id LIMIT 1
$$;
--> statement-breakpoint
-- Errors: PT401 key unknown or revoked, PT403 organization read-only, PT409 conflicting span state
-- (DETAIL is a JSON object with state, index, traceId, spanId, storedRevision).
-- Custom plans: a generic plan cached while the table was small would keep scanning every span
-- of the organization after it has grown; planning afresh costs far less than that.
CREATE OR REPLACE FUNCTION ingest_spans(p_key_id text, p_spans json) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
  k record;
  c record;
  v_in ingest_span[];
  v_new text[];
  v_old text[];
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

  -- All spans of a trace share one root. Spans already stored for a trace are consistent with each
  -- other, so one stored span per trace is enough to compare with.
  SELECT t."i", t."traceId", t."spanId", NULL::integer AS stored INTO c
    FROM (SELECT DISTINCT ON (e."traceId") e."i", e."traceId", e."spanId", e."rootSpanId" FROM unnest(v_in) e ORDER BY e."traceId", e."i") t
    WHERE stored_trace_root(k.organization_id, t."traceId") <> t."rootSpanId"
    ORDER BY t."i" LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'The span names another root than the trace already stored.' USING ERRCODE = 'PT409',
      DETAIL = json_build_object('state', 'identity_changed', 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId")::text;
  END IF;

  WITH inserted AS (
    INSERT INTO spans (organization_id, trace_id, span_id, root_span_id, parent_span_id, revision, name, service, kind, status,
      started_at, ended_at, session_id, end_user_id, provider, model, prompt_version_id, pricing_version, input_tokens,
      output_tokens, cost_usd_nanos, cost_source, content_json, metadata_json, omitted, snapshot_digest, ingestion_key_id,
      application, environment)
    SELECT k.organization_id, e."traceId", e."spanId", e."rootSpanId", e."parentSpanId", e."revision", e."name", e."service", e."kind", e."status",
      e."startedAt", e."endedAt", e."sessionId", e."endUserId", e."provider", e."model", e."promptVersionId", e."pricingVersion", e."inputTokens",
      e."outputTokens", e."costUsdNanos", e."costSource", e."contentJson", e."metadataJson", e."omitted", e."digest", k.id,
      k.application, k.environment
    FROM unnest(v_in) e ORDER BY e."spanId"
    ON CONFLICT DO NOTHING
    RETURNING span_id
  )
  SELECT coalesce(array_agg(span_id), '{}') INTO v_new FROM inserted;

  IF cardinality(v_new) < cardinality(v_in) THEN
    -- Spans stored before (or committed meanwhile by a concurrent batch): lock them, then compare.
    -- Every statement below reaches spans through span_id = ANY (…), the unique index, never a scan.
    v_old := ARRAY(SELECT e."spanId" FROM unnest(v_in) e WHERE NOT e."spanId" = ANY (v_new));
    PERFORM 1 FROM spans s
      WHERE s.span_id = ANY (v_old) AND s.organization_id = k.organization_id
      ORDER BY s.span_id
      FOR UPDATE;

    SELECT e."i", e."traceId", e."spanId", s.revision AS stored,
      CASE
        WHEN s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)] THEN 'revision_conflict'
        WHEN e."revision" > s.revision AND (s.trace_id <> e."traceId" OR s.root_span_id <> e."rootSpanId" OR s.parent_span_id IS DISTINCT FROM e."parentSpanId") THEN 'identity_changed'
        ELSE 'reopened'
      END AS state
      INTO c
      FROM spans s
      JOIN unnest(v_in) e ON e."spanId" = s.span_id
      WHERE s.span_id = ANY (v_old) AND s.organization_id = k.organization_id
        AND (
          (s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)])
          OR (e."revision" > s.revision AND (s.trace_id <> e."traceId" OR s.root_span_id <> e."rootSpanId" OR s.parent_span_id IS DISTINCT FROM e."parentSpanId"))
          OR (s.status <> 'running' AND e."maxRunning" > s.revision)
        )
      ORDER BY e."i" LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'The span conflicts with its stored state.' USING ERRCODE = 'PT409',
        DETAIL = json_build_object('state', c.state, 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId", 'storedRevision', c.stored)::text;
    END IF;

    UPDATE spans s SET
      revision = e."revision", name = e."name", service = e."service", kind = e."kind", status = e."status",
      started_at = e."startedAt", ended_at = e."endedAt", session_id = e."sessionId", end_user_id = e."endUserId",
      provider = e."provider", model = e."model", prompt_version_id = e."promptVersionId", pricing_version = e."pricingVersion",
      input_tokens = e."inputTokens", output_tokens = e."outputTokens", cost_usd_nanos = e."costUsdNanos",
      cost_source = e."costSource", content_json = e."contentJson", metadata_json = e."metadataJson", omitted = e."omitted",
      snapshot_digest = e."digest", ingestion_key_id = k.id, application = k.application, environment = k.environment,
      received_at = now()
    FROM unnest(v_in) e
    WHERE s.span_id = ANY (v_old) AND s.organization_id = k.organization_id
      AND s.span_id = e."spanId" AND e."revision" > s.revision;
  END IF;

  -- last_used_at moves at most once a minute per key, so busy keys do not write on every batch.
  IF k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' THEN
    UPDATE ingestion_keys SET last_used_at = now()
      WHERE id = k.id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
  END IF;
END;
$$;

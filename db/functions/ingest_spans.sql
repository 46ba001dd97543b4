-- The element type of ingest_spans' batch: one element per distinct span of the batch, its
-- highest-revision snapshot, plus every revision and digest the batch carried for that span and the
-- highest revision that was still running. Created once (migration 0004); this block only documents
-- it and never changes an existing type: a change needs a hand-written migration.
DO $type$ BEGIN
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
EXCEPTION WHEN duplicate_object THEN NULL;
END $type$;
--> statement-breakpoint
-- Trace ingestion stores a whole batch in one call (one round trip, one implicit transaction): a
-- raised error rolls the batch back, so a rejected batch stores nothing.
-- Span rules are each decided once (the table is in server/traces/ingest.ts). This function decides
-- only the rules that need what is stored (the trace's root, the stored snapshot of a span), because
-- only here are they read under the locks that order concurrent batches. It trusts the caller
-- (server/traces/ingest-schema.ts and resolveBatch) for the rest and never re-tests them: every field
-- is valid, the events of one trace name one root, and each span's revs, digests and maxRunning
-- describe a valid sequence of its own (one digest per revision, one identity, never running again
-- once finished). Errors: PT401 key unknown or
-- revoked, PT403 organization read-only, PT409 conflicting span state (DETAIL is a JSON object with
-- state, index, traceId, spanId, storedRevision).
-- p_spans holds the rows without their contentJson and metadataJson (those fields of ingest_span
-- stay empty): the row whose event index is i has them in p_content[i + 1] and p_metadata[i + 1],
-- one parameter each, so the few-KB texts are neither escaped into JSON by the caller nor parsed
-- out of it here.
-- New and newer spans are written by one INSERT … ON CONFLICT DO UPDATE whose WHERE admits only a
-- valid successor of the stored snapshot. ON CONFLICT locks every existing row it meets, even when the
-- WHERE refuses it, so the rows left over (retries, older revisions, conflicts) are classified
-- afterwards under that lock; a conflict raises, which rolls the whole batch back.
-- The same statement keeps each touched trace's summary row (traces) equal to the aggregate of its
-- spans: it reads the old snapshots of the written spans (a CTE sees the snapshot from before the
-- write) and adds the differences; a trace where a span changed in a way differences cannot follow
-- (see recompute_trace_summaries) is recomputed from its spans afterwards.
-- Statements keep their cached plans (planning them afresh every call cost more than half the
-- function's time). Sequential scans are off, and each lookup by key names a column no other index
-- leads with (`organization_id || ''` for the rest), so no plan cached while the tables were small
-- can scan a grown organization; the rarely run leftover check is planned afresh by EXECUTE.
CREATE OR REPLACE FUNCTION ingest_spans(p_key_id text, p_spans json, p_content text[], p_metadata text[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = auto SET enable_seqscan = off AS $$
DECLARE
  k record;
  c record;
  v_in ingest_span[];
  v_done text[];
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
  v_wrong_root integer;
BEGIN
  SELECT ik.id, ik.organization_id, ik.application, ik.environment, ik.last_used_at, o.read_only,
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
  -- A trace first stored now is kept until this day (its partition: db/schema/traces.ts); a stored
  -- trace keeps its own, and every span of a trace is stored with the trace's.
  v_keep := current_date + coalesce(k.days, 30);

  -- A span is named by its trace and span ids (OpenTelemetry's rule): the same span id under another
  -- trace is another span. Sorted by them: every batch inserts and locks in the same order, so
  -- batches never deadlock.
  v_in := ARRAY(SELECT e FROM json_populate_recordset(NULL::ingest_span, p_spans) e ORDER BY e."traceId", e."spanId");

  -- Batches naming the same trace take its lock (in trace order, so never a deadlock) before the
  -- root probe: a concurrent first batch of the trace has committed its root by then, so two
  -- batches can never store two roots for one trace.
  PERFORM pg_advisory_xact_lock(hashtextextended(k.organization_id || '/' || x.t, 0))
    FROM (SELECT DISTINCT e."traceId" AS t FROM unnest(v_in) e ORDER BY 1) x;

  -- Rule decided here (needs the stored trace): all spans of a trace share one root, the one its
  -- summary row names. Taking the batch's first event of each trace trusts resolveBatch, which
  -- refused a batch naming two roots for one trace. One lookup per trace of
  -- the batch through traces_trace_org_idx: trace_id leads it, and `organization_id || ''` keeps
  -- every other index of traces (all lead with organization_id) out, so a generic plan cached while
  -- the table was small cannot read the whole organization (the estimates of those indexes tie with
  -- the primary key's on a small table). The same lookup tells which traces are stored already, and
  -- in which partition (one probe of that index per partition: the trace's keep_until is not known).
  SELECT coalesce(array_agg(x."traceId") FILTER (WHERE x.stored IS NOT NULL), '{}'),
      coalesce(array_agg(x.keep) FILTER (WHERE x.stored IS NOT NULL), '{}'),
      min(x."i") FILTER (WHERE x.stored <> x."rootSpanId")
    INTO v_known, v_known_keep, v_wrong_root
    FROM (
      SELECT t."i", t."traceId", t."rootSpanId", st.root_span_id AS stored, st.keep_until AS keep
      FROM (SELECT DISTINCT ON (e."traceId") e."i", e."traceId", e."rootSpanId" FROM unnest(v_in) e ORDER BY e."traceId", e."i") t
      LEFT JOIN LATERAL (
        SELECT tr.root_span_id, tr.keep_until FROM traces tr
        WHERE tr.trace_id = t."traceId" AND tr.organization_id || '' = k.organization_id LIMIT 1
      ) st ON true
    ) x;
  IF v_wrong_root IS NOT NULL THEN
    SELECT e."i", e."traceId", e."spanId" INTO c FROM unnest(v_in) e WHERE e."i" = v_wrong_root;
    RAISE EXCEPTION 'The span names another root than the trace already stored.' USING ERRCODE = 'PT409',
      DETAIL = json_build_object('state', 'identity_changed', 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId")::text;
  END IF;

  WITH old AS MATERIALIZED (
    -- The stored snapshots of the batch's spans, before the write: one primary-key lookup per span,
    -- once. (Without LIMIT the planner flattens the lateral into a join that can walk the
    -- organization's spans; inlined into the join below it ran once per written span.) Only spans
    -- of traces stored already are looked up: every stored span's trace has its summary row.
    SELECT s.*
    FROM unnest(v_in) e
    CROSS JOIN LATERAL (
      SELECT s.trace_id, s.span_id, s.kind, s.status, s.started_at, s.ended_at, s.session_id, s.end_user_id, s.input_tokens, s.output_tokens, s.cost_usd_nanos
      FROM spans s WHERE s.organization_id = k.organization_id AND s.trace_id = e."traceId" AND s.span_id = e."spanId"
        AND s.keep_until = v_known_keep[array_position(v_known, e."traceId")] LIMIT 1
    ) s
    WHERE e."traceId" = ANY (v_known)
  ), written AS (
    INSERT INTO spans AS s (organization_id, trace_id, span_id, root_span_id, parent_span_id, revision, name, service, kind, status,
      started_at, ended_at, session_id, end_user_id, provider, model, prompt_version_id, pricing_version, input_tokens,
      output_tokens, cost_usd_nanos, cost_source, content_json, metadata_json, omitted, snapshot_digest, ingestion_key_id,
      application, environment, keep_until, received_at)
    SELECT k.organization_id, e."traceId", e."spanId", e."rootSpanId", e."parentSpanId", e."revision", e."name", e."service", e."kind", e."status",
      e."startedAt", e."endedAt", e."sessionId", e."endUserId", e."provider", e."model", e."promptVersionId", e."pricingVersion", e."inputTokens",
      e."outputTokens", e."costUsdNanos", e."costSource", p_content[e."i" + 1], p_metadata[e."i" + 1], e."omitted", e."digest", k.id,
      k.application, k.environment, coalesce(v_known_keep[array_position(v_known, e."traceId")], v_keep), v_received
    FROM unnest(v_in) e ORDER BY e."traceId", e."spanId"
    ON CONFLICT (organization_id, trace_id, span_id, keep_until) DO UPDATE SET
      revision = excluded.revision, name = excluded.name, service = excluded.service, kind = excluded.kind, status = excluded.status,
      started_at = excluded.started_at, ended_at = excluded.ended_at, session_id = excluded.session_id, end_user_id = excluded.end_user_id,
      provider = excluded.provider, model = excluded.model, prompt_version_id = excluded.prompt_version_id, pricing_version = excluded.pricing_version,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd_nanos = excluded.cost_usd_nanos,
      cost_source = excluded.cost_source, content_json = excluded.content_json, metadata_json = excluded.metadata_json, omitted = excluded.omitted,
      snapshot_digest = excluded.snapshot_digest, ingestion_key_id = excluded.ingestion_key_id, application = excluded.application,
      environment = excluded.environment, received_at = v_received
    -- Only a valid successor of the stored snapshot is written; what is refused here is either kept
    -- (an older revision, an identical retry) or classified as a conflict below.
    WHERE excluded.revision > s.revision
      AND s.root_span_id = excluded.root_span_id AND s.parent_span_id IS NOT DISTINCT FROM excluded.parent_span_id
      AND NOT EXISTS (
        SELECT 1 FROM unnest(v_in) e
        WHERE e."traceId" = excluded.trace_id AND e."spanId" = excluded.span_id
          AND ((s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)])
            OR (s.status <> 'running' AND e."maxRunning" > s.revision))
      )
    RETURNING s.trace_id, s.span_id, s.root_span_id, s.name, s.service, s.kind, s.status, s.started_at, s.ended_at,
      s.session_id, s.end_user_id, s.input_tokens, s.output_tokens, s.cost_usd_nanos, s.keep_until
  ), change AS (
    SELECT w.*, o.span_id IS NOT NULL AS existed, o.kind AS o_kind, o.status AS o_status, o.started_at AS o_started_at,
      o.ended_at AS o_ended_at, o.session_id AS o_session_id, o.end_user_id AS o_end_user_id, o.input_tokens AS o_input_tokens,
      o.output_tokens AS o_output_tokens, o.cost_usd_nanos AS o_cost_usd_nanos
    FROM written w LEFT JOIN old o ON o.trace_id = w.trace_id AND o.span_id = w.span_id
  ), delta AS (
    -- Per trace: what the written spans add to each aggregate.
    SELECT d.trace_id, min(d.root_span_id) AS root_span_id, min(d.keep_until) AS keep_until,
      min(d.session_id) AS min_session_id, min(d.end_user_id) AS min_end_user_id,
      min(d.started_at) AS started_at, max(d.ended_at) AS max_ended_at,
      (count(*) FILTER (WHERE d.status = 'running') - count(*) FILTER (WHERE d.o_status = 'running'))::integer AS running_count,
      count(*) FILTER (WHERE NOT d.existed)::integer AS span_count,
      (sum(d.input_tokens) - coalesce(sum(d.o_input_tokens), 0))::bigint AS input_tokens,
      (sum(d.output_tokens) - coalesce(sum(d.o_output_tokens), 0))::bigint AS output_tokens,
      (sum(d.cost_usd_nanos) - coalesce(sum(d.o_cost_usd_nanos), 0))::bigint AS cost_usd_nanos,
      bit_or(span_kind_bit(d.kind)) AS kinds,
      -- Changes the differences cannot follow: a minimum, maximum or bit that may have to go back.
      coalesce(bool_or(d.existed AND (d.started_at <> d.o_started_at OR d.kind <> d.o_kind
        OR d.ended_at IS DISTINCT FROM d.o_ended_at AND d.o_ended_at IS NOT NULL
        OR d.session_id IS DISTINCT FROM d.o_session_id AND d.o_session_id IS NOT NULL
        OR d.end_user_id IS DISTINCT FROM d.o_end_user_id AND d.o_end_user_id IS NOT NULL
        OR d.input_tokens IS NULL AND d.o_input_tokens IS NOT NULL
        OR d.output_tokens IS NULL AND d.o_output_tokens IS NOT NULL
        OR d.cost_usd_nanos IS NULL AND d.o_cost_usd_nanos IS NOT NULL)), false) AS stale
    FROM change d
    GROUP BY d.trace_id
  ), head AS (
    -- Per trace: the batch's head candidate, its root if written, else its earliest written span.
    SELECT DISTINCT ON (d.trace_id) d.trace_id, d.span_id, d.started_at, d.name, d.service, d.status, d.session_id, d.end_user_id
    FROM change d
    ORDER BY d.trace_id, (d.span_id = d.root_span_id) DESC, d.started_at, d.span_id
  ), summary AS (
    -- A new trace gets the aggregate of its written spans; a stored one adds the differences. The
    -- head moves to the candidate when the candidate is the root, or when no root is stored and the
    -- candidate is the head itself (updated) or starts before it.
    INSERT INTO traces AS t (organization_id, trace_id, root_span_id, head_span_id, head_started_at, name, service, status,
      head_session_id, head_end_user_id, min_session_id, min_end_user_id, session_id, end_user_id, started_at, max_ended_at,
      running_count, span_count, input_tokens, output_tokens, cost_usd_nanos, kinds, keep_until)
    SELECT k.organization_id, x.trace_id, x.root_span_id, h.span_id, h.started_at, h.name, h.service, h.status,
      h.session_id, h.end_user_id, x.min_session_id, x.min_end_user_id, coalesce(h.session_id, x.min_session_id),
      coalesce(h.end_user_id, x.min_end_user_id), x.started_at, x.max_ended_at, x.running_count, x.span_count,
      x.input_tokens, x.output_tokens, x.cost_usd_nanos, x.kinds, x.keep_until
    FROM delta x JOIN head h ON h.trace_id = x.trace_id ORDER BY x.trace_id
    ON CONFLICT (organization_id, trace_id, keep_until) DO UPDATE SET
      (head_span_id, head_started_at, name, service, status, head_session_id, head_end_user_id, session_id, end_user_id) = (
        SELECT CASE WHEN m.head THEN excluded.head_span_id ELSE t.head_span_id END, CASE WHEN m.head THEN excluded.head_started_at ELSE t.head_started_at END, CASE WHEN m.head THEN excluded.name ELSE t.name END, CASE WHEN m.head THEN excluded.service ELSE t.service END, CASE WHEN m.head THEN excluded.status ELSE t.status END,
          CASE WHEN m.head THEN excluded.head_session_id ELSE t.head_session_id END, CASE WHEN m.head THEN excluded.head_end_user_id ELSE t.head_end_user_id END,
          coalesce(CASE WHEN m.head THEN excluded.head_session_id ELSE t.head_session_id END, least(t.min_session_id, excluded.min_session_id)),
          coalesce(CASE WHEN m.head THEN excluded.head_end_user_id ELSE t.head_end_user_id END, least(t.min_end_user_id, excluded.min_end_user_id))
        FROM (SELECT excluded.head_span_id = excluded.root_span_id
          OR (t.head_span_id <> t.root_span_id AND (excluded.head_span_id = t.head_span_id
            OR (excluded.head_started_at, excluded.head_span_id) < (t.head_started_at, t.head_span_id))) AS head) m),
      min_session_id = least(t.min_session_id, excluded.min_session_id),
      min_end_user_id = least(t.min_end_user_id, excluded.min_end_user_id),
      started_at = least(t.started_at, excluded.started_at),
      max_ended_at = greatest(t.max_ended_at, excluded.max_ended_at),
      running_count = t.running_count + excluded.running_count,
      span_count = t.span_count + excluded.span_count,
      input_tokens = CASE WHEN excluded.input_tokens IS NULL THEN t.input_tokens ELSE coalesce(t.input_tokens, 0) + excluded.input_tokens END,
      output_tokens = CASE WHEN excluded.output_tokens IS NULL THEN t.output_tokens ELSE coalesce(t.output_tokens, 0) + excluded.output_tokens END,
      cost_usd_nanos = CASE WHEN excluded.cost_usd_nanos IS NULL THEN t.cost_usd_nanos ELSE coalesce(t.cost_usd_nanos, 0) + excluded.cost_usd_nanos END,
      kinds = t.kinds | excluded.kinds
  )
  SELECT (SELECT coalesce(array_agg(trace_id || span_id), '{}') FROM written), (SELECT array_agg(trace_id) FROM delta WHERE stale)
    INTO v_done, v_stale;

  -- Rules decided here (they need the stored snapshot, read under the upsert's row lock), against
  -- each span the upsert left: its stored revision sent again with other content (revision_conflict);
  -- any revision, older ones too, naming another root or parent (identity_changed: a span's place in
  -- its tree never changes); a running revision newer than a stored finished one (reopened). Each
  -- condition is written once: a span none of them names is an older revision or an identical
  -- retry, acknowledged without a write. A span the upsert left
  -- is in the partition the upsert wrote to: one primary-key lookup finds it.
  IF cardinality(v_done) < cardinality(v_in) THEN
    EXECUTE $q$
      SELECT x.* FROM (
        SELECT e."i", e."traceId", e."spanId", s.revision AS stored,
          CASE
            WHEN s.revision = ANY (e."revs") AND s.snapshot_digest <> e."digests"[array_position(e."revs", s.revision)] THEN 'revision_conflict'
            WHEN s.root_span_id <> e."rootSpanId" OR s.parent_span_id IS DISTINCT FROM e."parentSpanId" THEN 'identity_changed'
            WHEN s.status <> 'running' AND e."maxRunning" > s.revision THEN 'reopened'
          END AS state
        FROM unnest($1) e
        JOIN spans s ON s.organization_id = $3 AND s.trace_id = e."traceId" AND s.span_id = e."spanId"
          AND s.keep_until = coalesce($5[array_position($4, e."traceId")], $6)
        WHERE NOT (e."traceId" || e."spanId") = ANY ($2)
      ) x
      WHERE x.state IS NOT NULL
      ORDER BY x."i" LIMIT 1
    $q$ INTO c USING v_in, v_done, k.organization_id, v_known, v_known_keep, v_keep;
    IF c.state IS NOT NULL THEN -- EXECUTE does not set FOUND
      RAISE EXCEPTION 'The span conflicts with its stored state.' USING ERRCODE = 'PT409',
        DETAIL = json_build_object('state', c.state, 'index', c."i", 'traceId', c."traceId", 'spanId', c."spanId", 'storedRevision', c.stored)::text;
    END IF;
  END IF;

  -- Only now, when the batch is known to be accepted: the summaries the differences cannot keep.
  IF v_stale IS NOT NULL THEN
    PERFORM recompute_trace_summaries(k.organization_id, v_stale);
  END IF;

  -- last_used_at moves at most once a minute per key, so busy keys do not write on every batch.
  IF k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' THEN
    UPDATE ingestion_keys SET last_used_at = now()
      WHERE id = k.id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
  END IF;
END;
$$;

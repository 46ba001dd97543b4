-- The weekly partitions of spans and traces (db/schema/traces.ts): partition spans_kYYYYMMDD holds
-- the keep_until values of the week from that Monday. Creates the missing ones from this week's
-- through the week of p_until; answers how many tables it created. Called by every process at
-- start and by the worker hourly (server/traces/retention.ts), with p_until past the longest
-- retention, so that a trace stored today always finds its partition.
CREATE OR REPLACE FUNCTION ensure_trace_partitions(p_until date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_week date := date_trunc('week', current_date)::date;
  v_table text;
  v_created integer := 0;
BEGIN
  -- Processes starting together take turns.
  PERFORM pg_advisory_xact_lock(hashtextextended('ensure_trace_partitions', 0));
  WHILE v_week <= p_until LOOP
    -- Created apart and attached: ATTACH takes only SHARE UPDATE EXCLUSIVE on the parent, which
    -- ingestion's writes and every read pass (CREATE … PARTITION OF would take ACCESS EXCLUSIVE and
    -- could deadlock with a batch holding one table while it waits for the other); checking the new
    -- table against its bounds reads nothing (it is empty). traces before spans, the order in which
    -- the ingestion functions first touch them.
    FOREACH v_table IN ARRAY ARRAY['traces', 'spans'] LOOP
      IF to_regclass(v_table || '_k' || to_char(v_week, 'YYYYMMDD')) IS NULL THEN
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', v_table || '_k' || to_char(v_week, 'YYYYMMDD'), v_table);
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
          v_table, v_table || '_k' || to_char(v_week, 'YYYYMMDD'), v_week, v_week + 7);
        v_created := v_created + 1;
      END IF;
    END LOOP;
    v_week := v_week + 7;
  END LOOP;
  RETURN v_created;
END;
$$;
--> statement-breakpoint
-- The partition tables whose week has passed (every keep_until in them is before today): still
-- attached, detached half-way (pending), or detached and not yet dropped. The worker detaches and
-- drops them (server/traces/retention.ts); nothing is deleted row by row.
CREATE OR REPLACE FUNCTION expired_trace_partitions() RETURNS TABLE (parent text, partition text, attached boolean, pending boolean)
LANGUAGE sql STABLE AS $$
  SELECT substring(c.relname FROM '^(spans|traces)_k'), c.relname::text, i.inhrelid IS NOT NULL, coalesce(i.inhdetachpending, false)
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
  LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
  WHERE c.relkind = 'r' AND c.relname ~ '^(spans|traces)_k[0-9]{8}$'
    AND to_date(right(c.relname, 8), 'YYYYMMDD') + 7 <= current_date
  ORDER BY 1 DESC, 2 -- a week's traces go before its spans: a listed trace never lacks its spans
$$;

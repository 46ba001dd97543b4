-- Group commit for ingestion (server/traces/group-commit.ts): the calls of several requests that
-- arrived together, stored by one statement in one transaction, so that they share one commit.
-- Call n is what its request alone would call: ingest_spans, or ingest_otlp_spans (p_otlp[n]), for
-- key p_keys[n] with the rows p_spans[n] (JSON, as those functions take them). The caller puts in
-- one group only requests that touch distinct traces (so distinct spans), so their
-- order does not change what is stored, and may merge the requests of one key into one call. Any
-- error raises and rolls the whole group back; the caller then stores each request on its own, so
-- that each gets the answer it would have had alone.
-- Texts: call n's contentJson and metadataJson are slots p_from[n] + 1 … p_from[n] + p_count[n] of
-- p_content and p_metadata, one parameter each; its rows index them from 0 as for the functions (a
-- slice is one-based), and each call walks only its own slots. (Each call's rows come as an element
-- of a text array rather than of one JSON document: reading a field of a JSON document lexes all of
-- it, and the rows would be lexed once per field.)
-- Locks: with several calls, every trace of the group (p_locks, organization/traceId as the
-- functions key their trace locks) is locked first, in one order, so that two groups sharing traces
-- queue instead of deadlocking; each call takes its own locks again, which a transaction holding
-- them passes at once.
CREATE OR REPLACE FUNCTION ingest_groups(p_keys text[], p_otlp boolean[], p_spans text[], p_from integer[], p_count integer[],
  p_locks text[], p_content text[], p_metadata text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(p_keys) > 1 THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(x.l, 0)) FROM (SELECT DISTINCT l FROM unnest(p_locks) l ORDER BY 1) x;
  END IF;
  FOR n IN 1 .. cardinality(p_keys) LOOP
    IF p_otlp[n] THEN
      PERFORM ingest_otlp_spans(p_keys[n], p_spans[n]::json, p_content[p_from[n] + 1 : p_from[n] + p_count[n]],
        p_metadata[p_from[n] + 1 : p_from[n] + p_count[n]]);
    ELSE
      PERFORM ingest_spans(p_keys[n], p_spans[n]::json, p_content[p_from[n] + 1 : p_from[n] + p_count[n]],
        p_metadata[p_from[n] + 1 : p_from[n] + p_count[n]]);
    END IF;
  END LOOP;
END;
$$;

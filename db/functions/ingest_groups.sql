-- Group commit for ingestion (server/traces/group-commit.ts): the calls of several requests that
-- arrived together, stored by one statement in one transaction, so that they share one commit.
-- p_calls is a JSON array of calls {key, otlp, from, count, spans}, each what its request alone
-- would call: ingest_spans, or ingest_otlp_spans without partial results (otlp), for that key with
-- those rows (as those functions take them). The caller puts in one group only requests that touch
-- distinct traces and spans, so their order does not change what is stored, and may merge the
-- requests of one key into one call. Any error raises and rolls the whole group back; the caller
-- then stores each request on its own, so that each gets the answer it would have had alone.
-- Texts: a call's contentJson and metadataJson are slots from + 1 … from + count of p_content and
-- p_metadata, one parameter each; its rows index them from 0 as for the functions (a slice is
-- one-based), and each call walks only its own slots.
-- Locks: with several calls, every trace of the group (p_locks, a JSON array of
-- "organization/traceId", as the functions key their trace locks) is locked first, in one order, so
-- that two groups sharing traces queue instead of deadlocking; each call takes its own locks again,
-- which a transaction holding them passes at once.
CREATE OR REPLACE FUNCTION ingest_groups(p_calls json, p_locks json, p_content text[], p_metadata text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  IF json_array_length(p_calls) > 1 THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(x.l, 0))
      FROM (SELECT DISTINCT l FROM json_array_elements_text(p_locks) l ORDER BY 1) x;
  END IF;
  FOR c IN
    SELECT e.value->>'key' AS key, (e.value->>'otlp')::boolean AS otlp, (e.value->>'from')::integer AS lo,
      (e.value->>'from')::integer + (e.value->>'count')::integer AS hi, e.value->'spans' AS spans
    FROM json_array_elements(p_calls) WITH ORDINALITY e ORDER BY e.ordinality
  LOOP
    IF c.otlp THEN
      PERFORM ingest_otlp_spans(c.key, c.spans, p_content[c.lo + 1 : c.hi], p_metadata[c.lo + 1 : c.hi], false);
    ELSE
      PERFORM ingest_spans(c.key, c.spans, p_content[c.lo + 1 : c.hi], p_metadata[c.lo + 1 : c.hi]);
    END IF;
  END LOOP;
END;
$$;

-- The bit of a span kind in traces.kinds, in the order of spanKinds (server/traces/schemas.ts) and
-- spanKindBits (db/schema/traces.ts). A plain SQL expression, so the planner inlines it.
CREATE OR REPLACE FUNCTION span_kind_bit(p_kind text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_kind WHEN 'execution' THEN 1 WHEN 'model' THEN 2 WHEN 'attempt' THEN 4 WHEN 'tool' THEN 8
    WHEN 'retrieval' THEN 16 WHEN 'custom' THEN 32 ELSE 0 END
$$;

-- Room on each page for HOT updates: ingestion rewrites a trace's summary row with every batch of
-- the trace, mostly without touching an indexed column.
ALTER TABLE traces SET (fillfactor = 70);
--> statement-breakpoint
-- Summaries of the traces stored before the traces table existed; from now on ingest_spans keeps
-- them. The trace-root probe reads traces.root_span_id, so stored_trace_root is no longer used.
SELECT recompute_trace_summaries(organization_id, array_agg(DISTINCT trace_id)) FROM spans GROUP BY organization_id;
--> statement-breakpoint
DROP FUNCTION IF EXISTS stored_trace_root(text, text);

-- A span is named by its trace and span ids (OpenTelemetry's rule) from the next migrations on, so
-- ingest_otlp_spans no longer rejects a span id stored under another trace: its p_partial parameter
-- and `rejected` result go. A function's result type cannot be replaced, only dropped and created
-- again (0043, from db/functions/ingest_otlp_spans.sql).
DROP FUNCTION IF EXISTS ingest_otlp_spans(text, json, text[], text[], boolean);

CREATE UNIQUE INDEX "traces_trace_org_idx" ON "traces" USING btree ("trace_id","organization_id");--> statement-breakpoint
-- Hand-written: from migration 0020 on, ingest_spans takes the batch's content and metadata texts as
-- two text arrays beside the JSON document (db/functions/ingest_spans.sql); the two-argument version goes.
DROP FUNCTION IF EXISTS ingest_spans(text, json);

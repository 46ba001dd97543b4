-- A span is named by its trace and span ids (OpenTelemetry's rule): spans keeps only its primary key
-- (organization_id, trace_id, span_id, keep_until) as identity, and online_scores is keyed the same way
-- (its key now also serves a trace's lookups, so online_scores_trace_idx goes).
DROP INDEX "spans_span_org_idx";--> statement-breakpoint
DROP INDEX "online_scores_trace_idx";--> statement-breakpoint
ALTER TABLE "online_scores" DROP CONSTRAINT "online_scores_organization_id_span_id_pk";--> statement-breakpoint
ALTER TABLE "online_scores" ADD CONSTRAINT "online_scores_organization_id_trace_id_span_id_pk" PRIMARY KEY("organization_id","trace_id","span_id");
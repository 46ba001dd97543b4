DROP INDEX "spans_org_span_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "spans_span_org_idx" ON "spans" USING btree ("span_id","organization_id");
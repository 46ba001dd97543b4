-- P2: spans and traces become tables partitioned by RANGE (keep_until), one partition per week
-- (db/schema/traces.ts). Hand-written: Drizzle cannot declare partitions; its snapshot sees plain
-- tables with the same columns, keys and indexes. Rows stored before keep their trace's first
-- arrival as the day their retention starts (received_at of its earliest span, else today).
CREATE TABLE "trace_retention" (
	"plan" text PRIMARY KEY NOT NULL,
	"days" integer NOT NULL
);
--> statement-breakpoint
INSERT INTO "trace_retention" ("plan", "days") VALUES ('free', 30), ('pro', 90);
--> statement-breakpoint
ALTER TABLE "spans" RENAME TO "spans_unpartitioned";
--> statement-breakpoint
ALTER TABLE "traces" RENAME TO "traces_unpartitioned";
--> statement-breakpoint
CREATE TABLE "spans" (LIKE "spans_unpartitioned" INCLUDING DEFAULTS, "keep_until" date NOT NULL) PARTITION BY RANGE ("keep_until");
--> statement-breakpoint
CREATE TABLE "traces" (LIKE "traces_unpartitioned" INCLUDING DEFAULTS, "keep_until" date NOT NULL) PARTITION BY RANGE ("keep_until");
--> statement-breakpoint
DO $partitions$
DECLARE
  v_week date := date_trunc('week', current_date)::date;
  v_table text;
BEGIN
  -- The weeks a trace stored now can fall in (the longest default retention and a week to spare);
  -- every process extends this at start and the worker hourly (ensure_trace_partitions).
  WHILE v_week <= current_date + 97 LOOP
    FOREACH v_table IN ARRAY ARRAY['spans', 'traces'] LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        v_table || '_k' || to_char(v_week, 'YYYYMMDD'), v_table, v_week, v_week + 7);
    END LOOP;
    v_week := v_week + 7;
  END LOOP;
END $partitions$;
--> statement-breakpoint
INSERT INTO "traces"
SELECT t.*, least(coalesce((SELECT min(s.received_at) FROM "spans_unpartitioned" s
    WHERE s.organization_id = t.organization_id AND s.trace_id = t.trace_id)::date, current_date), current_date)
    + coalesce(r.days, 90)
FROM "traces_unpartitioned" t
JOIN "organizations" o ON o.id = t.organization_id
LEFT JOIN "trace_retention" r ON r.plan = coalesce(o.plan, 'free')
WHERE least(coalesce((SELECT min(s.received_at) FROM "spans_unpartitioned" s
    WHERE s.organization_id = t.organization_id AND s.trace_id = t.trace_id)::date, current_date), current_date)
    + coalesce(r.days, 90) >= date_trunc('week', current_date)::date;
--> statement-breakpoint
INSERT INTO "spans"
SELECT s.*, t.keep_until
FROM "spans_unpartitioned" s
JOIN "traces" t ON t.organization_id = s.organization_id AND t.trace_id = s.trace_id;
--> statement-breakpoint
DROP TABLE "spans_unpartitioned";
--> statement-breakpoint
DROP TABLE "traces_unpartitioned";
--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_organization_id_trace_id_span_id_keep_until_pk" PRIMARY KEY("organization_id","trace_id","span_id","keep_until");
--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_organization_id_trace_id_keep_until_pk" PRIMARY KEY("organization_id","trace_id","keep_until");
--> statement-breakpoint
ALTER TABLE "spans" ADD CONSTRAINT "spans_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "spans_org_started_idx" ON "spans" USING btree ("organization_id","started_at");
--> statement-breakpoint
CREATE UNIQUE INDEX "spans_span_org_idx" ON "spans" USING btree ("span_id","organization_id","keep_until");
--> statement-breakpoint
CREATE INDEX "spans_org_version_started_idx" ON "spans" USING btree ("organization_id","prompt_version_id","started_at") WHERE "spans"."prompt_version_id" is not null;
--> statement-breakpoint
CREATE INDEX "spans_version_received_idx" ON "spans" USING btree ("received_at") WHERE "spans"."prompt_version_id" is not null;
--> statement-breakpoint
CREATE UNIQUE INDEX "traces_trace_org_idx" ON "traces" USING btree ("trace_id","organization_id","keep_until");
--> statement-breakpoint
CREATE INDEX "traces_org_started_idx" ON "traces" USING btree ("organization_id","started_at","trace_id");
--> statement-breakpoint
CREATE INDEX "traces_org_service_started_idx" ON "traces" USING btree ("organization_id","service","started_at","trace_id");
--> statement-breakpoint
CREATE INDEX "traces_org_status_started_idx" ON "traces" USING btree ("organization_id","status","started_at","trace_id");
--> statement-breakpoint
CREATE INDEX "traces_org_session_started_idx" ON "traces" USING btree ("organization_id","session_id","started_at","trace_id") WHERE "traces"."session_id" is not null;
--> statement-breakpoint
CREATE INDEX "traces_org_end_user_started_idx" ON "traces" USING btree ("organization_id","end_user_id","started_at","trace_id") WHERE "traces"."end_user_id" is not null;

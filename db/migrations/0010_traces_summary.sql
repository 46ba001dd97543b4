CREATE TABLE "traces" (
	"organization_id" text NOT NULL,
	"trace_id" text NOT NULL,
	"root_span_id" text NOT NULL,
	"head_span_id" text NOT NULL,
	"head_started_at" bigint NOT NULL,
	"name" text NOT NULL,
	"service" text NOT NULL,
	"status" text NOT NULL,
	"head_session_id" text,
	"head_end_user_id" text,
	"min_session_id" text,
	"min_end_user_id" text,
	"session_id" text,
	"end_user_id" text,
	"started_at" bigint NOT NULL,
	"max_ended_at" bigint,
	"running_count" integer NOT NULL,
	"span_count" integer NOT NULL,
	"input_tokens" bigint,
	"output_tokens" bigint,
	"cost_usd_nanos" bigint,
	"kinds" integer NOT NULL,
	CONSTRAINT "traces_organization_id_trace_id_pk" PRIMARY KEY("organization_id","trace_id")
);
--> statement-breakpoint
ALTER TABLE "traces" ADD CONSTRAINT "traces_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "traces_org_started_idx" ON "traces" USING btree ("organization_id","started_at","trace_id");--> statement-breakpoint
CREATE INDEX "traces_org_service_started_idx" ON "traces" USING btree ("organization_id","service","started_at","trace_id");--> statement-breakpoint
CREATE INDEX "traces_org_status_started_idx" ON "traces" USING btree ("organization_id","status","started_at","trace_id");--> statement-breakpoint
CREATE INDEX "traces_org_session_started_idx" ON "traces" USING btree ("organization_id","session_id","started_at","trace_id") WHERE "traces"."session_id" is not null;--> statement-breakpoint
CREATE INDEX "traces_org_end_user_started_idx" ON "traces" USING btree ("organization_id","end_user_id","started_at","trace_id") WHERE "traces"."end_user_id" is not null;
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_status_code" integer,
	"last_error" text,
	"next_attempt_at" timestamp (3) with time zone,
	"delivered_at" timestamp (3) with time zone,
	"last_response_excerpt" text,
	"last_attempt_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"url" text NOT NULL,
	"events" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"description" text,
	"secret_sealed" text NOT NULL,
	"disabled_reason" text,
	"failing_since" timestamp (3) with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "online_eval_configs" (
	"prompt_id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"enabled" boolean NOT NULL,
	"sample_rate" double precision NOT NULL,
	"judge_model_route_id" text NOT NULL,
	"rubric" text NOT NULL,
	"enabled_at" timestamp (3) with time zone,
	"paused_at" timestamp (3) with time zone,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "online_eval_scanner" (
	"id" integer PRIMARY KEY NOT NULL,
	"scanned_until" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "online_score_daily" (
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"version_id" text NOT NULL,
	"day" text NOT NULL,
	"sampled" integer DEFAULT 0 NOT NULL,
	"scored" integer DEFAULT 0 NOT NULL,
	"passed" integer DEFAULT 0 NOT NULL,
	"score_sum" double precision DEFAULT 0 NOT NULL,
	"skipped_no_content" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "online_score_daily_prompt_id_version_id_day_pk" PRIMARY KEY("prompt_id","version_id","day")
);
--> statement-breakpoint
CREATE TABLE "online_scores" (
	"organization_id" text NOT NULL,
	"trace_id" text NOT NULL,
	"span_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"version_id" text NOT NULL,
	"started_at" bigint NOT NULL,
	"day" text NOT NULL,
	"status" text NOT NULL,
	"passed" boolean,
	"score" real,
	"reasoning" text,
	"judge_model_route_id" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"claimed_until" timestamp (3) with time zone,
	"charged" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"scored_at" timestamp (3) with time zone,
	CONSTRAINT "online_scores_organization_id_span_id_pk" PRIMARY KEY("organization_id","span_id")
);
--> statement-breakpoint
ALTER TABLE "dataset_cases" ADD COLUMN "source_trace_id" text;--> statement-breakpoint
ALTER TABLE "dataset_cases" ADD COLUMN "source_span_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_webhook_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."webhook_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_eval_configs" ADD CONSTRAINT "online_eval_configs_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_eval_configs" ADD CONSTRAINT "online_eval_configs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_score_daily" ADD CONSTRAINT "online_score_daily_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_score_daily" ADD CONSTRAINT "online_score_daily_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_scores" ADD CONSTRAINT "online_scores_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "online_scores" ADD CONSTRAINT "online_scores_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_events_org_idx" ON "webhook_events" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "webhooks_org_idx" ON "webhooks" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "online_score_daily_prompt_day_idx" ON "online_score_daily" USING btree ("prompt_id","day");--> statement-breakpoint
CREATE INDEX "online_scores_trace_idx" ON "online_scores" USING btree ("organization_id","trace_id");--> statement-breakpoint
CREATE INDEX "online_scores_version_started_idx" ON "online_scores" USING btree ("version_id","started_at");--> statement-breakpoint
CREATE INDEX "online_scores_pending_idx" ON "online_scores" USING btree ("created_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "spans_version_received_idx" ON "spans" USING btree ("received_at") WHERE "spans"."prompt_version_id" is not null;--> statement-breakpoint
INSERT INTO "online_eval_scanner" ("id", "scanned_until") VALUES (1, now()) ON CONFLICT DO NOTHING;

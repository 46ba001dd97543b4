CREATE TABLE "prompt_label_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"label" text NOT NULL,
	"from_version_id" text,
	"to_version_id" text,
	"user_id" text NOT NULL,
	"client_id" text NOT NULL,
	"evaluation_id" text,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_results" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"run_id" text NOT NULL,
	"case_id" text NOT NULL,
	"position" integer NOT NULL,
	"input" text NOT NULL,
	"expected_output" text NOT NULL,
	"input_format" text NOT NULL,
	"reference_format" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"output" text,
	"passed" boolean,
	"score" real,
	"assertions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"judge_reasoning" text,
	"error" text,
	"review" jsonb,
	"latency_ms" integer,
	"input_tokens" bigint,
	"output_tokens" bigint,
	"cost_usd_nanos" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"charged" boolean DEFAULT false NOT NULL,
	"worker_id" text,
	"claimed_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "eval_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"version_id" text,
	"content" jsonb NOT NULL,
	"scoring" jsonb NOT NULL,
	"cases_digest" text NOT NULL,
	"reuse_key" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"total_cases" integer NOT NULL,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "eval_workers" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "evaluations" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"scope" text NOT NULL,
	"version_id" text,
	"version" integer,
	"production_version_id" text,
	"candidate_run_id" text NOT NULL,
	"production_run_id" text,
	"scoring" jsonb NOT NULL,
	"dataset_size" integer NOT NULL,
	"total_cases" integer NOT NULL,
	"rerun_both" boolean DEFAULT false NOT NULL,
	"draft_revision" integer,
	"snapshot_digest" text,
	"error" text,
	"created_by" text NOT NULL,
	"created_by_client" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "prompt_versions" ADD COLUMN "draft_user_id" text;--> statement-breakpoint
ALTER TABLE "prompt_versions" ADD COLUMN "draft_revision" integer;--> statement-breakpoint
ALTER TABLE "prompt_versions" ADD COLUMN "source_evaluation_id" text;--> statement-breakpoint
ALTER TABLE "prompts" ADD COLUMN "scoring" jsonb DEFAULT '{"method":"expected"}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "prompt_label_history" ADD CONSTRAINT "prompt_label_history_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_label_history" ADD CONSTRAINT "prompt_label_history_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_results" ADD CONSTRAINT "eval_results_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_results" ADD CONSTRAINT "eval_results_run_id_eval_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."eval_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "eval_runs" ADD CONSTRAINT "eval_runs_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evaluations" ADD CONSTRAINT "evaluations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evaluations" ADD CONSTRAINT "evaluations_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "prompt_label_history_prompt_idx" ON "prompt_label_history" USING btree ("prompt_id","id");--> statement-breakpoint
CREATE INDEX "prompt_label_history_label_idx" ON "prompt_label_history" USING btree ("prompt_id","label","id");--> statement-breakpoint
CREATE UNIQUE INDEX "eval_results_case_idx" ON "eval_results" USING btree ("run_id","case_id");--> statement-breakpoint
CREATE INDEX "eval_results_run_idx" ON "eval_results" USING btree ("run_id","position");--> statement-breakpoint
CREATE INDEX "eval_results_work_idx" ON "eval_results" USING btree ("status","run_id");--> statement-breakpoint
CREATE INDEX "eval_runs_reuse_idx" ON "eval_runs" USING btree ("organization_id","reuse_key","status");--> statement-breakpoint
CREATE INDEX "eval_runs_status_idx" ON "eval_runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "evaluations_prompt_idx" ON "evaluations" USING btree ("organization_id","prompt_id","id");--> statement-breakpoint
CREATE INDEX "evaluations_status_idx" ON "evaluations" USING btree ("status");--> statement-breakpoint
CREATE UNIQUE INDEX "prompt_versions_draft_idx" ON "prompt_versions" USING btree ("prompt_id","draft_user_id","draft_revision");
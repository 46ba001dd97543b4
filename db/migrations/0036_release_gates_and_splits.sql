CREATE TABLE "prompt_release_policies" (
	"prompt_id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"protected_labels" text[] NOT NULL,
	"require_evaluation" boolean NOT NULL,
	"max_pass_rate_drop" double precision NOT NULL,
	"max_regressions" integer NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "prompt_split_versions" (
	"split_id" text NOT NULL,
	"position" integer NOT NULL,
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"label" text NOT NULL,
	"version_id" text NOT NULL,
	"weight" integer NOT NULL,
	"lo" integer NOT NULL,
	"hi" integer NOT NULL,
	CONSTRAINT "prompt_split_versions_split_id_position_pk" PRIMARY KEY("split_id","position")
);
--> statement-breakpoint
CREATE TABLE "retrieval_split_counts" (
	"split_id" text NOT NULL,
	"version_id" text NOT NULL,
	"organization_id" text NOT NULL,
	"minute" timestamp (3) with time zone NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "retrieval_split_counts_split_id_version_id_minute_pk" PRIMARY KEY("split_id","version_id","minute")
);
--> statement-breakpoint
ALTER TABLE "prompt_label_history" ADD COLUMN "to_split" jsonb;--> statement-breakpoint
ALTER TABLE "prompt_label_history" ADD COLUMN "from_split" jsonb;--> statement-breakpoint
ALTER TABLE "prompt_label_history" ADD COLUMN "override_reason" text;--> statement-breakpoint
ALTER TABLE "prompt_labels" ADD COLUMN "split_id" text;--> statement-breakpoint
ALTER TABLE "prompt_labels" ADD COLUMN "split_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "prompt_release_policies" ADD CONSTRAINT "prompt_release_policies_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_release_policies" ADD CONSTRAINT "prompt_release_policies_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_split_versions" ADD CONSTRAINT "prompt_split_versions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_split_versions" ADD CONSTRAINT "prompt_split_versions_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_split_versions" ADD CONSTRAINT "prompt_split_versions_version_id_prompt_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."prompt_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "retrieval_split_counts" ADD CONSTRAINT "retrieval_split_counts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "prompt_split_versions_bucket_idx" ON "prompt_split_versions" USING btree ("split_id","lo","hi");--> statement-breakpoint
CREATE INDEX "prompt_split_versions_prompt_idx" ON "prompt_split_versions" USING btree ("prompt_id","label");--> statement-breakpoint
CREATE INDEX "spans_org_version_started_idx" ON "spans" USING btree ("organization_id","prompt_version_id","started_at") WHERE "spans"."prompt_version_id" is not null;
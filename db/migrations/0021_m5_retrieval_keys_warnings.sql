CREATE TABLE "retrieval_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"prompt_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"secret_digest" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_client" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "warnings" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"prompt_id" text,
	"key_id" text,
	"message" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"count" integer DEFAULT 1 NOT NULL,
	"last_occurrence_id" text,
	"first_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "retrieval_keys" ADD CONSTRAINT "retrieval_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "retrieval_keys" ADD CONSTRAINT "retrieval_keys_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "warnings" ADD CONSTRAINT "warnings_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "retrieval_keys_digest_idx" ON "retrieval_keys" USING btree ("secret_digest");--> statement-breakpoint
CREATE INDEX "retrieval_keys_prompt_idx" ON "retrieval_keys" USING btree ("organization_id","prompt_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "warnings_subject_idx" ON "warnings" USING btree ("organization_id","kind","subject_id");--> statement-breakpoint
CREATE INDEX "warnings_org_idx" ON "warnings" USING btree ("organization_id","last_seen_at","id");
CREATE TABLE "service_accounts" (
	"organization_id" text NOT NULL,
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"secret_digest" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "service_accounts_client_id_idx" ON "service_accounts" USING btree ("client_id");--> statement-breakpoint
CREATE UNIQUE INDEX "service_accounts_digest_idx" ON "service_accounts" USING btree ("secret_digest");--> statement-breakpoint
CREATE INDEX "service_accounts_org_idx" ON "service_accounts" USING btree ("organization_id","id");
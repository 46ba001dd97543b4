ALTER TABLE "billing_events" ADD COLUMN "customer_id" text;--> statement-breakpoint
ALTER TABLE "billing_events" ADD COLUMN "payload" jsonb;--> statement-breakpoint
CREATE INDEX "billing_events_unlinked_idx" ON "billing_events" USING btree ("subscription_id","customer_id") WHERE outcome = 'unlinked';
ALTER TABLE "idempotency_records" ALTER COLUMN "response_body" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "drafts" ALTER COLUMN "content" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "prompt_versions" ALTER COLUMN "content" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "eval_runs" ALTER COLUMN "content" SET DATA TYPE json;
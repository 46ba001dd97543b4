ALTER TABLE "prompts" ADD COLUMN "last_version_number" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- version_count held the highest number; it becomes the number of versions (they differ after an
-- import with gaps), and last_version_number keeps the highest.
UPDATE "prompts" SET "last_version_number" = "version_count";
--> statement-breakpoint
UPDATE "prompts" p SET "version_count" = (SELECT count(*) FROM "prompt_versions" v WHERE v."prompt_id" = p."id")
  WHERE p."version_count" > 0;

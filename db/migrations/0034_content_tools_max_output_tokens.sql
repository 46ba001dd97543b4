-- Prompt content gains `tools` (function tools, default none) and `maxOutputTokens` (default null,
-- the route's own limit). Every stored content gets both, so retrieval, exports, digests and the
-- editor see one shape whatever the content's age.
UPDATE "drafts" SET "content" = '{"tools":[],"maxOutputTokens":null}'::jsonb || "content" WHERE NOT ("content" ? 'tools');
--> statement-breakpoint
UPDATE "prompt_versions" SET "content" = '{"tools":[],"maxOutputTokens":null}'::jsonb || "content" WHERE NOT ("content" ? 'tools');
--> statement-breakpoint
UPDATE "eval_runs" SET "content" = '{"tools":[],"maxOutputTokens":null}'::jsonb || "content" WHERE NOT ("content" ? 'tools');

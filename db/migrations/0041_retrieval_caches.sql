CREATE SEQUENCE "public"."retrieval_changes" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "retrieval_caches" (
	"id" text PRIMARY KEY NOT NULL,
	"lease_until" timestamp (3) with time zone NOT NULL,
	"acked" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);

ALTER TABLE "evaluations" ADD COLUMN "created_by_human" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "eval_results_running_org_idx" ON "eval_results" USING btree ("organization_id") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "evaluations_candidate_run_idx" ON "evaluations" USING btree ("candidate_run_id");--> statement-breakpoint
CREATE INDEX "evaluations_production_run_idx" ON "evaluations" USING btree ("production_run_id");
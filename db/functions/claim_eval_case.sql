-- The charge for one case, called by claim_eval_case in the transaction that claims the case, once
-- ever per case (the first claim; a takeover or a retry of the same case is not charged again).
-- Evaluation credits arrive with M7: until then a case costs nothing.
CREATE OR REPLACE FUNCTION charge_eval_case(p_organization_id text, p_run_id text, p_result_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  RETURN;
END
$$;
--> statement-breakpoint
-- Claims the next case of one evaluation run for a worker (server/evals/engine/claim.ts), in one
-- round trip. Nothing is claimed from a run that is not pending or running, or whose evaluation is
-- cancelled or paused. A case is claimable when it is pending, or running for a worker whose
-- eval_workers heartbeat is older than p_stale_ms (or gone). Claims of one organization are
-- serialized by a transaction-level advisory lock taken before the count of its running cases held
-- by live workers, so several worker processes together never exceed p_max_in_flight; each later
-- statement of this function sees the claims committed before the lock was granted. Called on its
-- own (one implicit transaction), the lock is held only while the function runs, never across a
-- round trip to a busy worker. A case charged here for the first time calls charge_eval_case in
-- this same transaction: the one place M7 debits a credit (it may raise to refuse the claim).
-- Outcomes: claimed (the row is now running for the
-- worker, attempts + 1, charged; was_charged tells whether it had been charged before), none, busy
-- (the organization's bound is reached), gave_up (a case abandoned p_max_attempts times is
-- recorded as an error instead of being started again).
CREATE OR REPLACE FUNCTION claim_eval_case(p_run_id text, p_worker_id text, p_stale_ms integer, p_max_in_flight integer, p_max_attempts integer)
RETURNS TABLE (outcome text, id text, case_id text, "position" integer, input text, expected_output text, input_format text, reference_format text, attempts integer, was_charged boolean, run_was_pending boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_org text;
  v_run_status text;
  v_in_flight integer;
  c record;
BEGIN
  SELECT run.organization_id, run.status INTO v_org, v_run_status FROM eval_runs run WHERE run.id = p_run_id;
  IF v_org IS NULL OR v_run_status NOT IN ('pending', 'running') OR EXISTS (
    SELECT 1 FROM evaluations e
    WHERE (e.candidate_run_id = p_run_id OR e.production_run_id = p_run_id) AND e.status IN ('cancelled', 'paused')
  ) THEN
    RETURN QUERY SELECT 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean;
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('eval-org:' || v_org, 0));
  SELECT count(*) INTO v_in_flight FROM eval_results r
  WHERE r.organization_id = v_org AND r.status = 'running' AND EXISTS (
    SELECT 1 FROM eval_workers w WHERE w.id = r.worker_id AND w.heartbeat_at > now() - p_stale_ms * interval '1 millisecond'
  );
  IF v_in_flight >= p_max_in_flight THEN
    RETURN QUERY SELECT 'busy'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean;
    RETURN;
  END IF;
  SELECT r.id, r.case_id, r.position, r.input, r.expected_output, r.input_format, r.reference_format, r.attempts, r.charged, r.status INTO c
  FROM eval_results r
  WHERE r.run_id = p_run_id AND r.status IN ('pending', 'running') AND (r.status = 'pending' OR NOT EXISTS (
    SELECT 1 FROM eval_workers w WHERE w.id = r.worker_id AND w.heartbeat_at > now() - p_stale_ms * interval '1 millisecond'
  ))
  ORDER BY r.position
  LIMIT 1
  FOR UPDATE OF r SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean;
    RETURN;
  END IF;
  IF c.status = 'running' AND c.attempts >= p_max_attempts THEN
    UPDATE eval_results SET status = 'error', finished_at = now(),
      error = format('The case was started %s times and never finished (its worker stopped each time).', c.attempts)
    WHERE eval_results.id = c.id;
    RETURN QUERY SELECT 'gave_up'::text, c.id, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean;
    RETURN;
  END IF;
  UPDATE eval_results SET status = 'running', worker_id = p_worker_id, claimed_at = now(), attempts = eval_results.attempts + 1, charged = true
  WHERE eval_results.id = c.id;
  IF NOT c.charged THEN
    PERFORM charge_eval_case(v_org, p_run_id, c.id);
  END IF;
  RETURN QUERY SELECT 'claimed'::text, c.id, c.case_id, c.position, c.input, c.expected_output, c.input_format, c.reference_format, c.attempts + 1, c.charged, v_run_status = 'pending';
END
$$;
--> statement-breakpoint
-- Stores a finished case's outcome and claims the next case in one round trip
-- (server/evals/engine/claim.ts): the store is the conditional write of a case this worker still
-- holds (status running, worker_id = p_worker_id; `stored` tells whether it was written), done
-- first, so the slot it frees counts before claim_eval_case counts the organization's running
-- cases. p_run_id NULL stores only (one row: outcome 'none'). Called on its own (one implicit
-- transaction) like claim_eval_case; a caller whose claim raises stores the outcome again alone.
CREATE OR REPLACE FUNCTION store_and_claim_eval_case(
  p_result_id text, p_worker_id text, p_status text, p_output text, p_passed boolean, p_score real, p_assertions jsonb,
  p_judge_reasoning text, p_error text, p_latency_ms integer, p_input_tokens bigint, p_output_tokens bigint, p_cost_usd_nanos bigint,
  p_run_id text, p_stale_ms integer, p_max_in_flight integer, p_max_attempts integer)
RETURNS TABLE (stored boolean, outcome text, id text, case_id text, "position" integer, input text, expected_output text, input_format text, reference_format text, attempts integer, was_charged boolean, run_was_pending boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_stored boolean;
BEGIN
  UPDATE eval_results SET status = p_status, output = p_output, passed = p_passed, score = p_score, assertions = p_assertions,
    judge_reasoning = p_judge_reasoning, error = p_error, latency_ms = p_latency_ms, input_tokens = p_input_tokens,
    output_tokens = p_output_tokens, cost_usd_nanos = p_cost_usd_nanos, finished_at = now()
  WHERE eval_results.id = p_result_id AND eval_results.status = 'running' AND eval_results.worker_id = p_worker_id;
  v_stored := FOUND;
  IF p_run_id IS NULL THEN
    RETURN QUERY SELECT v_stored, 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean;
    RETURN;
  END IF;
  RETURN QUERY SELECT v_stored, c.* FROM claim_eval_case(p_run_id, p_worker_id, p_stale_ms, p_max_in_flight, p_max_attempts) c;
END
$$;

-- Claims the next case of one evaluation run for a worker (server/evals/engine/claim.ts), in one
-- round trip. Nothing is claimed from a run that is not pending or running, or whose evaluation is
-- cancelled or paused. A case is claimable when it is pending, or running for a worker whose
-- eval_workers heartbeat is older than p_stale_ms (or gone). Claims of one organization are
-- serialized by a transaction-level advisory lock taken before the count of its running cases held
-- by live workers, so several worker processes together never exceed p_max_in_flight; each later
-- statement of this function sees the claims committed before the lock was granted. Called on its
-- own (one implicit transaction), the lock is held only while the function runs, never across a
-- round trip to a busy worker. A case claimed here for the first time takes one evaluation credit
-- with charge_eval_case (db/functions/billing.sql) in this same transaction, before the row is
-- touched: the one place credits are debited, so a case is charged exactly once whatever crashes.
-- p_credits_free / p_credits_pro are the allowances per period (EVAL_CREDITS_FREE / _PRO).
-- Outcomes: claimed (the row is now running for the
-- worker, attempts + 1, charged; was_charged tells whether it had been charged before), none, busy
-- (the organization's bound is reached), gave_up (a case abandoned p_max_attempts times is
-- recorded as an error instead of being started again), exhausted (no credit left for the next
-- case: nothing is claimed, and the caller pauses the evaluation).
-- With p_store_id, the same call first stores the outcome of the case the worker executed before
-- (one round trip per case instead of two): the conditional write of a case this worker still
-- holds (running, worker_id = p_worker_id; `stored` tells whether it was written), done before
-- the organization's running cases are counted, so the slot it frees is free for this claim.
-- p_store holds the outcome's columns (status, output, passed, score, assertions,
-- judge_reasoning, error, latency_ms, input_tokens, output_tokens, cost_usd_nanos). p_run_id
-- NULL only stores (outcome none). A caller whose call fails stores the outcome again on its own.
-- A handoff skips the lock and the count: when the stored case belonged to the same organization
-- and this worker's heartbeat is live, that case counted against the bound until this transaction
-- and the claimed one counts from it, so every other claimer counts the same number before and
-- after the commit, and the bound cannot be passed. With 8 lanes finishing together this removes
-- the queue on the organization's lock from the steady state (only first claims take it).
CREATE OR REPLACE FUNCTION claim_eval_case(p_run_id text, p_worker_id text, p_stale_ms integer, p_max_in_flight integer, p_max_attempts integer, p_store_id text, p_store jsonb, p_credits_free integer, p_credits_pro integer)
RETURNS TABLE (outcome text, id text, case_id text, "position" integer, input text, expected_output text, input_format text, reference_format text, attempts integer, was_charged boolean, run_was_pending boolean, stored boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_org text;
  v_run_status text;
  v_in_flight integer;
  v_stored boolean;
  v_stored_org text;
  v_handoff boolean := false;
  c record;
BEGIN
  IF p_store_id IS NOT NULL THEN
    UPDATE eval_results SET status = p_store->>'status', output = p_store->>'output', passed = (p_store->>'passed')::boolean,
      score = (p_store->>'score')::real, assertions = coalesce(p_store->'assertions', '[]'::jsonb), judge_reasoning = p_store->>'judge_reasoning',
      error = p_store->>'error', latency_ms = (p_store->>'latency_ms')::integer, input_tokens = (p_store->>'input_tokens')::bigint,
      output_tokens = (p_store->>'output_tokens')::bigint, cost_usd_nanos = (p_store->>'cost_usd_nanos')::bigint, finished_at = now()
    WHERE eval_results.id = p_store_id AND eval_results.status = 'running' AND eval_results.worker_id = p_worker_id
    RETURNING eval_results.organization_id INTO v_stored_org;
    v_stored := FOUND;
  END IF;
  IF p_run_id IS NULL THEN
    RETURN QUERY SELECT 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
    RETURN;
  END IF;
  SELECT run.organization_id, run.status INTO v_org, v_run_status FROM eval_runs run WHERE run.id = p_run_id;
  IF v_org IS NULL OR v_run_status NOT IN ('pending', 'running') OR EXISTS (
    SELECT 1 FROM evaluations e
    WHERE (e.candidate_run_id = p_run_id OR e.production_run_id = p_run_id) AND e.status IN ('cancelled', 'paused')
  ) THEN
    RETURN QUERY SELECT 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
    RETURN;
  END IF;
  v_handoff := coalesce(v_stored, false) AND v_stored_org = v_org AND EXISTS (
    SELECT 1 FROM eval_workers w WHERE w.id = p_worker_id AND w.heartbeat_at > now() - p_stale_ms * interval '1 millisecond'
  );
  IF NOT v_handoff THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('eval-org:' || v_org, 0));
    SELECT count(*) INTO v_in_flight FROM eval_results r
    WHERE r.organization_id = v_org AND r.status = 'running' AND EXISTS (
      SELECT 1 FROM eval_workers w WHERE w.id = r.worker_id AND w.heartbeat_at > now() - p_stale_ms * interval '1 millisecond'
    );
  END IF;
  IF NOT v_handoff AND v_in_flight >= p_max_in_flight THEN
    RETURN QUERY SELECT 'busy'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
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
    RETURN QUERY SELECT 'none'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
    RETURN;
  END IF;
  IF c.status = 'running' AND c.attempts >= p_max_attempts THEN
    UPDATE eval_results SET status = 'error', finished_at = now(),
      error = format('The case was started %s times and never finished (its worker stopped each time).', c.attempts)
    WHERE eval_results.id = c.id;
    RETURN QUERY SELECT 'gave_up'::text, c.id, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
    RETURN;
  END IF;
  IF NOT c.charged AND NOT charge_eval_case(v_org, p_run_id, c.id, p_credits_free, p_credits_pro) THEN
    RETURN QUERY SELECT 'exhausted'::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::boolean, NULL::boolean, v_stored;
    RETURN;
  END IF;
  UPDATE eval_results SET status = 'running', worker_id = p_worker_id, claimed_at = now(), attempts = eval_results.attempts + 1, charged = true
  WHERE eval_results.id = c.id;
  RETURN QUERY SELECT 'claimed'::text, c.id, c.case_id, c.position, c.input, c.expected_output, c.input_format, c.reference_format, c.attempts + 1, c.charged, v_run_status = 'pending', v_stored;
END
$$;

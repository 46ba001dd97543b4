-- The credit period an organization is in now and its allowance (API.md "Billing"): on Pro, the
-- current period of its entitling subscription (active, trialing or past_due) with the Pro
-- allowance, so an upgrade starts a new period. While Stripe has not reported a current period
-- (a paid checkout whose subscription events are on their way, or a renewal not reported yet),
-- Pro periods run monthly from the last known boundary: the period end, else when the
-- subscription was first seen; the renewal's real period then starts on that same boundary. On
-- Free (and on Pro without a subscription), the calendar month in UTC. Allowances come from the
-- caller (EVAL_CREDITS_FREE / EVAL_CREDITS_PRO).
CREATE OR REPLACE FUNCTION credit_period(p_organization_id text, p_credits_free integer, p_credits_pro integer)
RETURNS TABLE (starts_at timestamptz, ends_at timestamptz, credits integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_plan text;
  s record;
  v_month timestamp;
BEGIN
  SELECT o.plan INTO v_plan FROM organizations o WHERE o.id = p_organization_id;
  IF v_plan = 'pro' THEN
    SELECT b.current_period_start AS period_start, b.current_period_end AS period_end, b.created_at INTO s
    FROM billing_subscriptions b
    WHERE b.organization_id = p_organization_id AND b.status IN ('active', 'trialing', 'past_due')
      -- Cancelled at a period end that has passed: Pro is over there (server/billing/state.ts lapsed).
      AND NOT (b.cancel_at_period_end AND coalesce(b.current_period_end <= now(), false))
    ORDER BY (b.current_period_start <= now() AND b.current_period_end > now()) DESC NULLS LAST, b.current_period_start DESC NULLS LAST, b.created_at DESC, b.id
    LIMIT 1;
    IF FOUND THEN
      IF s.period_start <= now() AND s.period_end > now() THEN
        RETURN QUERY SELECT s.period_start, s.period_end, p_credits_pro;
        RETURN;
      END IF;
      v_month := (CASE WHEN s.period_end <= now() THEN s.period_end ELSE s.created_at END) AT TIME ZONE 'UTC';
      FOR i IN 1..1200 LOOP
        EXIT WHEN ((v_month + interval '1 month') AT TIME ZONE 'UTC') > now();
        v_month := v_month + interval '1 month';
      END LOOP;
      RETURN QUERY SELECT v_month AT TIME ZONE 'UTC', (v_month + interval '1 month') AT TIME ZONE 'UTC', p_credits_pro;
      RETURN;
    END IF;
    -- Only lapsed subscriptions (the sweep has not moved the plan yet): Free's month and allowance.
    IF EXISTS (SELECT 1 FROM billing_subscriptions b
               WHERE b.organization_id = p_organization_id AND b.status IN ('active', 'trialing', 'past_due')) THEN
      v_plan := 'free';
    END IF;
  END IF;
  v_month := date_trunc('month', now() AT TIME ZONE 'UTC');
  RETURN QUERY SELECT v_month AT TIME ZONE 'UTC', (v_month + interval '1 month') AT TIME ZONE 'UTC',
    CASE WHEN v_plan = 'pro' THEN p_credits_pro ELSE p_credits_free END;
END
$$;
--> statement-breakpoint
-- Takes one evaluation credit for one case, called by claim_eval_case in the transaction that
-- claims the case, once ever per case (a takeover or a retry of the same case is not charged
-- again). One upsert on the period's row: `used` grows by one only while it is below the
-- allowance, so concurrent claims never take the balance below zero. False when no credit is
-- left: the case is not claimed.
CREATE OR REPLACE FUNCTION charge_eval_case(p_organization_id text, p_run_id text, p_result_id text, p_credits_free integer, p_credits_pro integer) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM credit_period(p_organization_id, p_credits_free, p_credits_pro);
  IF p.credits IS NULL OR p.credits < 1 THEN
    RETURN false;
  END IF;
  INSERT INTO credit_periods AS c (organization_id, period_start, period_end, allowance, used)
  VALUES (p_organization_id, p.starts_at, p.ends_at, p.credits, 1)
  ON CONFLICT (organization_id, period_start) DO UPDATE
    SET used = c.used + 1, allowance = excluded.allowance, period_end = excluded.period_end
    WHERE c.used < excluded.allowance;
  RETURN FOUND;
END
$$;

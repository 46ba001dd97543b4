// The online-evaluation form's values and how they map to PUT …/online-evaluation (API.md "Online
// evaluation"): the sample rate is typed as a percentage and sent as a fraction. Pure: unit-tested.

export type OnlineForm = { enabled: boolean; samplePercent: string; judgeModelRouteId: string; rubric: string };

type Stored = { enabled: boolean; sampleRate: number; judgeModelRouteId: string | null; rubric: string | null };
type Scoring = { judgeModelRouteId: string | null; rubric: string | null } | undefined;

// 0.1 → "10", 0.005 → "0.5": at most three decimals, no trailing zeros.
export function percentText(rate: number): string {
  return String(Math.round(rate * 100_000) / 1000);
}

/**
 * What the form starts from: the stored configuration, and where it has none the defaults the
 * server would use (the scoring policy's judge route and rubric, else the first available route).
 */
export function initialForm(stored: Stored, scoring: Scoring, firstRoute: string | undefined): OnlineForm {
  return {
    enabled: stored.enabled,
    samplePercent: percentText(stored.sampleRate),
    judgeModelRouteId: stored.judgeModelRouteId ?? scoring?.judgeModelRouteId ?? firstRoute ?? '',
    rubric: stored.rubric ?? scoring?.rubric ?? '',
  };
}

/**
 * The hint under the rubric: where its text came from, and what an empty field does (the server
 * then takes the scoring policy's rubric, or refuses to enable without one).
 */
export function rubricHintText(stored: string | null, policyRubric: string | null): string {
  const what = 'What a passing output must do.';
  if (!policyRubric)
    return stored
      ? `${what} This prompt’s scoring policy has no rubric of its own, so keep this one to keep scoring on.`
      : `${what} This prompt’s scoring policy has no rubric to fall back on: write one to turn scoring on.`;
  if (stored === null) return `${what} Starts as the rubric of this prompt’s scoring policy.`;
  if (stored === policyRubric)
    return `${what} The same as this prompt’s scoring policy; left empty, it follows that rubric.`;
  return `${what} Left empty, the rubric of this prompt’s scoring policy is used.`;
}

type OnlineInput = { enabled: boolean; sampleRate: number; judgeModelRouteId?: string; rubric?: string };

/** The request body, or the message to show next to the sample rate. */
export function toInput(form: OnlineForm): { input: OnlineInput } | { error: { samplePercent: string } } {
  const text = form.samplePercent.trim().replace(/%$/, '').trim();
  const percent = Number(text);
  if (!text || !Number.isFinite(percent) || percent < 0 || percent > 100)
    return { error: { samplePercent: 'Enter a percentage from 0 to 100, e.g. 10.' } };
  const rubric = form.rubric.trim();
  return {
    input: {
      enabled: form.enabled,
      // Rounded so that 7 % is 0.07, not 0.07000000000000001.
      sampleRate: Math.round(percent * 1000) / 100_000,
      ...(form.judgeModelRouteId ? { judgeModelRouteId: form.judgeModelRouteId } : {}),
      ...(rubric ? { rubric } : {}),
    },
  };
}

import type { z } from 'zod';
import type { spanOnlineScoreSchema } from '@/server/online/schemas';
import { Badge } from '@/components/ui/Badge';
import { formatDateTime } from '@/components/format';
import { Fact, mono } from './Fact';

export type SpanOnlineScore = z.infer<typeof spanOnlineScoreSchema>;

const verdict = (passed: boolean | null) =>
  passed === true ? (
    <Badge tone="success">Passed</Badge>
  ) : passed === false ? (
    <Badge tone="danger">Failed</Badge>
  ) : (
    <Badge>No verdict</Badge>
  );

// The online evaluation's judgement of a span (API.md "Online evaluation": the span field
// onlineScore): nothing when the span was not scored (null) or the API does not say (absent).
export function OnlineScoreSection({ score }: { score: SpanOnlineScore | undefined }) {
  if (!score) return null;
  return (
    <section className="span-panel-section" aria-label="Online score">
      <div className="span-panel-section-head">
        <h3>Online score</h3>
        {verdict(score.passed)}
      </div>
      <dl className="span-facts">
        <Fact label="Score">
          {score.score === null ? null : <span data-testid="online-score">{score.score.toFixed(2)}</span>}
        </Fact>
        <Fact label="Judge">{mono(score.judgeModelRouteId)}</Fact>
        <Fact label="Scored">{score.at ? formatDateTime(score.at) : null}</Fact>
      </dl>
      {score.reasoning ? (
        <div className="online-reasoning">
          <p className="online-reasoning-label">Judge’s reasoning</p>
          <p>{score.reasoning}</p>
        </div>
      ) : null}
    </section>
  );
}

import type { LabelItem } from '@/server/prompts/schemas';

type Chip = { label: string; version: number; split?: LabelItem['split']; splitId?: string | null };

// A label as the prompt header and the prompt list show it: its name and version, and "split" when it
// shares traffic between versions (the version shown is then the largest weight's; the title lists
// the shares when they are known).
export function LabelChip({ label }: { label: Chip }) {
  const shares = label.split?.map((entry) => `v${entry.version} ${entry.weight}%`).join(' · ');
  const splits = Boolean(shares) || Boolean(label.splitId);
  const title = shares
    ? `${label.label} splits traffic: ${shares}`
    : splits
      ? `${label.label} splits traffic between versions; v${label.version} has the largest share`
      : undefined;
  return (
    <span className="label-chip" title={title}>
      <span className="label-chip-name">{label.label}</span> <span className="muted">v{label.version}</span>
      {splits ? (
        <>
          {' '}
          <span className="label-chip-split">split</span>
        </>
      ) : null}
    </span>
  );
}

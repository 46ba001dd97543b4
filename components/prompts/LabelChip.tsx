import type { LabelItem } from '@/server/prompts/schemas';

type Chip = { label: string; version: number; split?: LabelItem['split'] };

// A label as the prompt header shows it: its name and version, and "split" when it shares traffic
// between versions (the version shown is then the largest weight's; the title lists the shares).
export function LabelChip({ label }: { label: Chip }) {
  const shares = label.split?.map((entry) => `v${entry.version} ${entry.weight}%`).join(' · ');
  return (
    <span className="label-chip" title={shares ? `${label.label} splits traffic: ${shares}` : undefined}>
      <span className="label-chip-name">{label.label}</span> <span className="muted">v{label.version}</span>
      {shares ? (
        <>
          {' '}
          <span className="label-chip-split">split</span>
        </>
      ) : null}
    </span>
  );
}

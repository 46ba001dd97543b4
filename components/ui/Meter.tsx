// A bar that shows how much of an allowance is used (dataset cases, evaluation credits). `level`
// drives the colour through the caller's `data-level` styles: warn from 80 % (the share at which
// dataset_near_capacity opens), full at the limit.

export type MeterLevel = 'ok' | 'warn' | 'full';

function meterRatio(value: number, max: number): number {
  return max > 0 ? Math.min(1, value / max) : 1;
}

export function meterLevel(value: number, max: number): MeterLevel {
  if (value >= max) return 'full';
  return meterRatio(value, max) >= 0.8 ? 'warn' : 'ok';
}

export function MeterBar({
  className,
  label,
  value,
  max,
  valueText,
}: {
  className: string;
  label: string;
  value: number;
  max: number;
  valueText: string;
}) {
  return (
    <div
      className={className}
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={Math.min(value, max)}
      aria-valuetext={valueText}
    >
      <span style={{ width: `${meterRatio(value, max) * 100}%` }} />
    </div>
  );
}

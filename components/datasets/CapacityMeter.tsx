import { MeterBar, meterLevel } from '@/components/ui/Meter';

export function CapacityMeter({ count, capacity }: { count: number; capacity: number }) {
  const level = meterLevel(count, capacity);
  return (
    <div className="capacity" data-level={level}>
      <div className="capacity-text">
        <strong>
          {count} / {capacity} cases
        </strong>
        {level === 'full' ? <span>Full</span> : level === 'warn' ? <span>{capacity - count} left</span> : null}
      </div>
      <MeterBar
        className="capacity-bar"
        label="Dataset capacity"
        value={count}
        max={capacity}
        valueText={`${count} of ${capacity} cases`}
      />
    </div>
  );
}

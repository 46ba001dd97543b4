export function CapacityMeter({ count, capacity }: { count: number; capacity: number }) {
  const ratio = capacity > 0 ? Math.min(1, count / capacity) : 1;
  const level = count >= capacity ? 'full' : ratio >= 0.8 ? 'warn' : 'ok';
  return (
    <div className="capacity" data-level={level}>
      <div className="capacity-text">
        <strong>
          {count} / {capacity} cases
        </strong>
        {level === 'full' ? <span>Full</span> : level === 'warn' ? <span>{capacity - count} left</span> : null}
      </div>
      <div
        className="capacity-bar"
        role="meter"
        aria-label="Dataset capacity"
        aria-valuemin={0}
        aria-valuemax={capacity}
        aria-valuenow={count}
        aria-valuetext={`${count} of ${capacity} cases`}
      >
        <span style={{ width: `${ratio * 100}%` }} />
      </div>
    </div>
  );
}

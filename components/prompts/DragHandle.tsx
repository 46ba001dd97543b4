import type { DragEvent } from 'react';
import './prompts.css';

type HandleProps = { draggable: boolean; onDragStart: (event: DragEvent<HTMLElement>) => void; onDragEnd: () => void };

// The grip that starts a native drag (see useDragReorder); keyboard users have the move buttons.
export function DragHandle({ label, handle }: { label: string; handle: HandleProps }) {
  return (
    <span className="drag-handle" title="Drag to reorder" aria-label={label} {...handle}>
      <svg width="14" height="14" viewBox="0 0 24 24" fill="currentColor" aria-hidden="true" focusable="false">
        {[5, 12, 19].flatMap((y) => [9, 15].map((x) => <circle key={`${x}-${y}`} cx={x} cy={y} r="1.6" />))}
      </svg>
    </span>
  );
}

import type { DragEvent } from 'react';
import './prompts.css';

type HandleProps = { draggable: boolean; onDragStart: (event: DragEvent<HTMLElement>) => void; onDragEnd: () => void };

// The grip that starts a native drag (see useDragReorder). Mouse only: keyboard and screen-reader
// users have the move buttons, so it is hidden from assistive technology rather than named.
export function DragHandle({ handle }: { handle: HandleProps }) {
  return (
    <span className="drag-handle" title="Drag to reorder" aria-hidden="true" {...handle}>
      <svg width="14" height="14" viewBox="0 0 24 24" fill="currentColor" aria-hidden="true" focusable="false">
        {[5, 12, 19].flatMap((y) => [9, 15].map((x) => <circle key={`${x}-${y}`} cx={x} cy={y} r="1.6" />))}
      </svg>
    </span>
  );
}

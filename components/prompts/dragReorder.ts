'use client';

import { useState, type DragEvent } from 'react';

// Moves one item of a list to another index (the item lands at `to` in the result).
export function moveItem<T>(items: readonly T[], from: number, to: number): T[] {
  const next = items.slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item);
  return next;
}

// Native HTML5 drag and drop: a handle starts the drag, any row is a drop target.
export function useDragReorder(onMove: (from: number, to: number) => void, enabled = true) {
  const [dragging, setDragging] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);

  function handleProps(index: number, rowElement?: () => HTMLElement | null) {
    return {
      draggable: enabled,
      onDragStart: (event: DragEvent<HTMLElement>) => {
        event.dataTransfer.effectAllowed = 'move';
        event.dataTransfer.setData('text/plain', String(index));
        const row = rowElement?.();
        if (row) event.dataTransfer.setDragImage(row, 16, 16);
        setDragging(index);
      },
      onDragEnd: () => {
        setDragging(null);
        setOver(null);
      },
    };
  }

  function targetProps(index: number) {
    return {
      onDragOver: (event: DragEvent<HTMLElement>) => {
        if (!enabled || dragging === null) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'move';
        if (over !== index) setOver(index);
      },
      onDragLeave: () => setOver((current) => (current === index ? null : current)),
      onDrop: (event: DragEvent<HTMLElement>) => {
        if (!enabled) return;
        event.preventDefault();
        const from = dragging ?? Number(event.dataTransfer.getData('text/plain'));
        setDragging(null);
        setOver(null);
        if (Number.isInteger(from) && from !== index) onMove(from, index);
      },
      'data-drop-target':
        over === index && dragging !== null && dragging !== index ? (dragging < index ? 'below' : 'above') : undefined,
      'data-dragging': dragging === index ? true : undefined,
    };
  }

  return { handleProps, targetProps };
}

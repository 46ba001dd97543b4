'use client';

import { useEffect, useId, useRef, type ReactNode } from 'react';
import { ancestorPath, rescueFocus } from './focus-rescue';

type DialogProps = {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  description?: ReactNode;
  children?: ReactNode;
  footer: ReactNode;
};

// A modal on the native <dialog>: focus trap, Escape and the backdrop come from the browser.
export function Dialog({ open, onClose, title, description, children, footer }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();

  const opener = useRef<Element[]>([]);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = ancestorPath(document.activeElement);
      dialog.showModal();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      onClose={() => {
        // The browser gives focus back to the opener; if the action removed it (a revoked key's
        // button), to the nearest part of the page that is left.
        const path = opener.current;
        requestAnimationFrame(() => rescueFocus(path));
        onClose();
      }}
      onClick={(event) => {
        if (event.target === ref.current) onClose();
      }}
    >
      {open ? (
        <>
          <div className="dialog-body">
            <h2 className="dialog-title" id={titleId}>
              {title}
            </h2>
            {description ? (
              <div className="dialog-description" id={descriptionId}>
                {description}
              </div>
            ) : null}
            {children}
          </div>
          <div className="dialog-footer">{footer}</div>
        </>
      ) : null}
    </dialog>
  );
}

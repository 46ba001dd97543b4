'use client';

import { useCallback, useRef } from 'react';

const control = 'input:not([type=hidden]), select, textarea';

function firstInvalidControl(form: HTMLFormElement): HTMLElement | null {
  const invalid = form.querySelector<HTMLElement>('[aria-invalid="true"]');
  if (!invalid) return null;
  // A group (the events fieldset) is not focusable itself: its first control is.
  return invalid.matches(control) ? invalid : invalid.querySelector<HTMLElement>(control);
}

/**
 * After a refused submit, moves focus to the first invalid field of the form, whether the check ran
 * in the browser (errors shown at once) or on the server (errors shown when the answer comes back),
 * so a keyboard user does not have to walk back through the form. Typing ends the wait.
 */
export function useFocusFirstInvalid() {
  const form = useRef<HTMLFormElement | null>(null);
  const waiting = useRef(false);

  const focusInvalid = useCallback(() => {
    if (!waiting.current || !form.current) return;
    const target = firstInvalidControl(form.current);
    if (!target) return;
    waiting.current = false;
    target.focus();
  }, []);

  // A ref callback, not an effect: a dialog's form is mounted only while the dialog is open.
  const formRef = useCallback(
    (element: HTMLFormElement | null) => {
      form.current = element;
      if (!element) return;
      const observer = new MutationObserver(focusInvalid);
      observer.observe(element, {
        subtree: true,
        attributes: true,
        attributeFilter: ['aria-invalid'],
        childList: true,
      });
      const stopWaiting = () => (waiting.current = false);
      element.addEventListener('input', stopWaiting);
      return () => {
        observer.disconnect();
        element.removeEventListener('input', stopWaiting);
        form.current = null;
      };
    },
    [focusInvalid],
  );

  /** Call when the form is submitted. */
  const submitted = useCallback(() => {
    waiting.current = true;
    requestAnimationFrame(focusInvalid);
  }, [focusInvalid]);

  return { formRef, submitted };
}

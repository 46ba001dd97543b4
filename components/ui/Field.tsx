'use client';

import {
  createContext,
  useContext,
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type Ref,
  type SelectHTMLAttributes,
} from 'react';
import { FieldError } from './FieldError';

type FieldContextValue = { id: string; describedBy: string | undefined; invalid: boolean };
const FieldContext = createContext<FieldContextValue | null>(null);

type FieldProps = {
  label: ReactNode;
  error?: string | null;
  hint?: ReactNode;
  id?: string;
  children: ReactNode;
  className?: string;
};

// Label, control, hint and error wired together: the control gets aria-invalid and aria-describedby.
export function Field({ label, error, hint, id, children, className }: FieldProps) {
  const generated = useId();
  const controlId = id ?? generated;
  const hintId = hint ? `${controlId}-hint` : undefined;
  const errorId = error ? `${controlId}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ') || undefined;
  return (
    <FieldContext.Provider value={{ id: controlId, describedBy, invalid: Boolean(error) }}>
      <div className={['field', className].filter(Boolean).join(' ')}>
        <label className="field-label" htmlFor={controlId}>
          {label}
        </label>
        {children}
        <FieldError id={errorId} message={error} />
        {hint ? (
          <p className="field-hint" id={hintId}>
            {hint}
          </p>
        ) : null}
      </div>
    </FieldContext.Provider>
  );
}

function useFieldProps(id: string | undefined, ariaInvalid: unknown, describedBy: string | undefined) {
  const field = useContext(FieldContext);
  return {
    id: id ?? field?.id,
    'aria-invalid': (ariaInvalid as boolean | undefined) ?? (field?.invalid || undefined),
    'aria-describedby': describedBy ?? field?.describedBy,
  };
}

export function Input({
  className,
  id,
  'aria-invalid': ariaInvalid,
  'aria-describedby': describedBy,
  ...rest
}: InputHTMLAttributes<HTMLInputElement> & { ref?: Ref<HTMLInputElement> }) {
  return (
    <input
      className={['input', className].filter(Boolean).join(' ')}
      {...useFieldProps(id, ariaInvalid, describedBy)}
      {...rest}
    />
  );
}

type SelectProps = SelectHTMLAttributes<HTMLSelectElement> & { compact?: boolean; ref?: Ref<HTMLSelectElement> };

export function Select({
  className,
  id,
  compact,
  'aria-invalid': ariaInvalid,
  'aria-describedby': describedBy,
  ...rest
}: SelectProps) {
  return (
    <select
      className={['select', compact && 'select-sm', className].filter(Boolean).join(' ')}
      {...useFieldProps(id, ariaInvalid, describedBy)}
      {...rest}
    />
  );
}

import Link from 'next/link';
import type { ComponentProps, ReactNode } from 'react';

type Variant = 'primary' | 'secondary' | 'danger' | 'danger-outline' | 'ghost';
type Size = 'md' | 'sm';

function classes(variant: Variant, size: Size, block: boolean | undefined, extra?: string) {
  return ['btn', variant !== 'secondary' && `btn-${variant}`, size === 'sm' && 'btn-sm', block && 'btn-block', extra]
    .filter(Boolean)
    .join(' ');
}

type ButtonProps = ComponentProps<'button'> & {
  variant?: Variant;
  size?: Size;
  block?: boolean;
  loading?: boolean;
  icon?: ReactNode;
};

export function Button({
  variant = 'secondary',
  size = 'md',
  block,
  loading,
  icon,
  className,
  disabled,
  children,
  type = 'button',
  onClick,
  'aria-disabled': ariaDisabled,
  ...rest
}: ButtonProps) {
  // A busy button stays focusable (aria-disabled, clicks and form submits ignored): `disabled` would
  // drop keyboard focus to the top of the page while the work runs.
  const busy = Boolean(loading && !disabled);
  return (
    <button
      type={type}
      className={classes(variant, size, block, className)}
      disabled={disabled}
      aria-disabled={busy || ariaDisabled || undefined}
      aria-busy={loading || undefined}
      {...rest}
      onClick={(event) => {
        if (busy) {
          event.preventDefault();
          return;
        }
        onClick?.(event);
      }}
    >
      {loading ? <span className="spinner" aria-hidden="true" /> : icon}
      {children}
    </button>
  );
}

type ButtonLinkProps = ComponentProps<typeof Link> & {
  variant?: Variant;
  size?: Size;
  block?: boolean;
  icon?: ReactNode;
};

export function ButtonLink({
  variant = 'secondary',
  size = 'md',
  block,
  icon,
  className,
  children,
  ...rest
}: ButtonLinkProps) {
  return (
    <Link className={classes(variant, size, block, className)} {...rest}>
      {icon}
      {children}
    </Link>
  );
}

import type { ReactNode, TableHTMLAttributes } from 'react';

// A scrollable table; use plain <thead>/<tbody>/<tr>/<th>/<td> inside.
export function Table({
  caption,
  children,
  className,
  ...rest
}: TableHTMLAttributes<HTMLTableElement> & { caption?: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className={['table', className].filter(Boolean).join(' ')} {...rest}>
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        {children}
      </table>
    </div>
  );
}

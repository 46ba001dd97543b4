import type { ReactNode } from 'react';

export function PageHeader({
  title,
  description,
  actions,
  breadcrumbs,
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  breadcrumbs?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div className="page-header-text">
        {breadcrumbs ? (
          <nav className="breadcrumbs" aria-label="Breadcrumb">
            {breadcrumbs}
          </nav>
        ) : null}
        <h1 className="page-title">{title}</h1>
        {description ? <p className="page-description">{description}</p> : null}
      </div>
      {actions ? <div className="inline">{actions}</div> : null}
    </header>
  );
}

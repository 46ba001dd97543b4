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

// Between a title and the badges after it inside a heading (a flex row, which adds no space to the name): screen
// readers read "Support reply, Setup", not "Support replySetup".
export function TitleBreak() {
  return <span className="visually-hidden">, </span>;
}

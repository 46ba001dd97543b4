import type { HTMLAttributes, ReactNode, Ref } from 'react';

type CardProps = HTMLAttributes<HTMLElement> & {
  tone?: 'default' | 'danger';
  flush?: boolean;
  as?: 'section' | 'div';
  ref?: Ref<HTMLDivElement>;
};

export function Card({ tone = 'default', flush, as: Tag = 'section', className, ...rest }: CardProps) {
  return (
    <Tag
      className={['card', tone === 'danger' && 'card-danger', flush && 'card-flush', className]
        .filter(Boolean)
        .join(' ')}
      {...rest}
    />
  );
}

export function CardHeader({
  title,
  description,
  actions,
  titleId,
}: {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  titleId?: string;
}) {
  return (
    <header className="card-header">
      <div className="card-header-text">
        <h2 className="card-title" id={titleId}>
          {title}
        </h2>
        {description ? <p className="card-description">{description}</p> : null}
      </div>
      {actions}
    </header>
  );
}

export function CardBody({ className, ...rest }: HTMLAttributes<HTMLDivElement>) {
  return <div className={['card-body', className].filter(Boolean).join(' ')} {...rest} />;
}

export function CardFooter({
  align = 'between',
  className,
  ...rest
}: HTMLAttributes<HTMLDivElement> & { align?: 'between' | 'end' }) {
  return (
    <div
      className={['card-footer', align === 'end' && 'card-footer-end', className].filter(Boolean).join(' ')}
      {...rest}
    />
  );
}

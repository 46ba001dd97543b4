import type { ReactNode } from 'react';
import { AlertCircleIcon, CheckCircleIcon, InfoIcon } from './icons';

type Tone = 'info' | 'success' | 'warning' | 'error';

export function Alert({
  tone = 'info',
  title,
  children,
  action,
  id,
}: {
  tone?: Tone;
  title?: ReactNode;
  children?: ReactNode;
  action?: ReactNode;
  id?: string;
}) {
  const Icon = tone === 'success' ? CheckCircleIcon : tone === 'info' ? InfoIcon : AlertCircleIcon;
  return (
    <div id={id} className={`alert alert-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      <Icon size={16} />
      <div className="alert-body">
        {title ? <p className="alert-title">{title}</p> : null}
        {children ? <div>{children}</div> : null}
      </div>
      {action}
    </div>
  );
}

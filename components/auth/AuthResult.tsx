'use client';

import { useEffect, useRef, type ReactNode } from 'react';
import { Card } from '@/components/ui/Card';
import { AlertCircleIcon, CheckCircleIcon, MailIcon } from '@/components/ui/icons';

// The outcome of an emailed link or a request (verified, sent, expired…): one clear card.
export function AuthResult({
  tone,
  title,
  children,
  actions,
  takeFocus,
}: {
  tone: 'success' | 'warning' | 'info';
  title: string;
  children?: ReactNode;
  actions?: ReactNode;
  /** For a result that replaces the form just submitted: its heading takes the focus the form's button had. */
  takeFocus?: boolean;
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (takeFocus) headingRef.current?.focus();
  }, [takeFocus]);
  const Icon = tone === 'success' ? CheckCircleIcon : tone === 'warning' ? AlertCircleIcon : MailIcon;
  return (
    <Card className="auth-card">
      <div className="auth-result">
        <span className={`auth-result-icon${tone === 'info' ? '' : ` auth-result-icon-${tone}`}`}>
          <Icon size={22} />
        </span>
        <div className="auth-heading">
          <h1
            ref={headingRef}
            tabIndex={takeFocus ? -1 : undefined}
            aria-describedby={takeFocus && children ? 'auth-result-text' : undefined}
          >
            {title}
          </h1>
          {children ? (
            <p className="muted" id="auth-result-text">
              {children}
            </p>
          ) : null}
        </div>
      </div>
      {actions ? <div className="auth-actions">{actions}</div> : null}
    </Card>
  );
}

'use client';

import { useLayoutEffect, useRef, type TextareaHTMLAttributes } from 'react';
import { splitTemplate } from './variables';

type Props = Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'value' | 'onChange'> & {
  value: string;
  onChange: (value: string) => void;
};

// A textarea that grows with its text and highlights {{variables}}: a mirror with the same
// metrics sits under a transparent-text textarea, so the caret and selection stay native.
export function TemplateTextarea({ value, onChange, className, ...rest }: Props) {
  const ref = useRef<HTMLTextAreaElement>(null);
  useLayoutEffect(() => {
    const textarea = ref.current;
    if (!textarea) return;
    textarea.style.height = 'auto';
    textarea.style.height = `${textarea.scrollHeight + 2}px`;
  }, [value]);

  return (
    <div className={['template', className].filter(Boolean).join(' ')}>
      <div className="template-mirror" aria-hidden="true">
        {splitTemplate(value).map((part, i) =>
          part.variable ? (
            <mark key={i} className="template-var">
              {part.text}
            </mark>
          ) : (
            <span key={i}>{part.text}</span>
          ),
        )}
        {/* A trailing newline needs a character after it to take up its line. */}
        {'\u200b'}
      </div>
      <textarea
        ref={ref}
        className="template-input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        rows={2}
        spellCheck={false}
        {...rest}
      />
    </div>
  );
}

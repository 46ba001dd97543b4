'use client';

import { useMemo, useState } from 'react';
import { Button } from '@/components/ui/Button';

const collapseAfterLines = 16;

// Pretty-prints a JSON string (shown raw if it does not parse); long values start collapsed.
export function JsonBlock({ value, label }: { value: string; label: string }) {
  const text = useMemo(() => {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }, [value]);
  const lines = text.split('\n').length;
  const long = lines > collapseAfterLines || text.length > 2000;
  const [expanded, setExpanded] = useState(false);
  const collapsed = long && !expanded;
  return (
    <div>
      <pre
        className={['json-block', collapsed && 'json-block-collapsed'].filter(Boolean).join(' ')}
        aria-label={label}
        tabIndex={0}
      >
        {text}
      </pre>
      {long ? (
        <Button
          size="sm"
          variant="ghost"
          className="json-toggle"
          onClick={() => setExpanded(!expanded)}
          aria-expanded={expanded}
        >
          {expanded ? 'Show less' : `Show all ${lines} lines`}
        </Button>
      ) : null}
    </div>
  );
}

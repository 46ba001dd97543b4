// Dates render in the browser's locale and time zone (all data loads client-side).
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function formatDate(iso: string): string {
  return dateFormat.format(new Date(iso));
}

export function formatDateTime(iso: string): string {
  return dateTimeFormat.format(new Date(iso));
}

export function formatRelative(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
    ['year', Infinity],
  ];
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return relativeFormat.format(Math.round(value), unit);
    value /= size;
  }
  return relativeFormat.format(Math.round(value), 'year');
}

export function initials(text: string | null | undefined): string {
  const clean = (text ?? '').trim();
  if (!clean) return '?';
  const parts = clean.split(/[\s@._-]+/).filter(Boolean);
  return ((parts[0]?.[0] ?? '') + (parts.length > 1 ? parts[1][0] : '')).toUpperCase() || '?';
}

export const roleOptions = [
  { value: 'admin', label: 'Admin', description: 'Full access, manages members and settings' },
  { value: 'editor', label: 'Editor', description: 'Can edit prompts and datasets' },
  { value: 'viewer', label: 'Viewer', description: 'Read-only access' },
] as const;

// Keeps sign-in redirects on this site: only local absolute paths are followed.
export function safeCallbackUrl(value: string | string[] | undefined | null, fallback = '/'): string {
  const url = Array.isArray(value) ? value[0] : value;
  if (!url || !url.startsWith('/') || url.startsWith('//') || url.startsWith('/\\')) return fallback;
  return url;
}

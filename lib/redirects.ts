// The one gate for redirect targets that come from input (callbackUrl and the like): only a path
// on this site passes, returned normalised; anything else becomes `fallback`.
//
// Browsers drop tab and newline inside URLs and read "\" as "/", so "/\t/evil.example" and
// "/\evil.example" both turn into the protocol-relative "//evil.example". Encoded forms (%09,
// %5C, %2F%2F) are decoded a few times and checked the same way, in case a later layer decodes.
const unsafeCharacters = /[\u0000-\u001f\u007f-\u009f\\]/;
const probeOrigin = 'http://redirect.invalid';
const maxLength = 2048;

function decodedForms(value: string): string[] | null {
  const forms = [value];
  let current = value;
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (next === current) break;
    forms.push(next);
    current = next;
  }
  return forms;
}

function looksLocal(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//') && !unsafeCharacters.test(path);
}

export function safeRedirectPath(value: unknown, fallback = '/'): string {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > maxLength) return fallback;
  const forms = decodedForms(raw);
  if (!forms || !forms.every(looksLocal)) return fallback;
  let url: URL;
  try {
    url = new URL(raw, probeOrigin);
  } catch {
    return fallback;
  }
  if (url.origin !== probeOrigin) return fallback;
  // Dot segments can still produce "//x" ("/..//x" → "//x"), so the normalised result is checked too.
  const path = `${url.pathname}${url.search}${url.hash}`;
  return looksLocal(path) ? path : fallback;
}

// For values that may be an absolute URL on our own origin (next-auth passes those): strips the
// origin first, then applies the same rules.
export function safeRedirectPathOn(value: string, origin: string, fallback = '/'): string {
  const local = value.startsWith(`${origin}/`) ? value.slice(origin.length) : value === origin ? '/' : value;
  return safeRedirectPath(local, fallback);
}

// Content-Type checks shared by the JSON edges (management REST, trace ingestion, OTLP/JSON).

/**
 * Whether `header` names JSON: `application/json` with any parameters, but a `charset` other than
 * UTF-8 is refused, since the body is read as UTF-8 and only UTF-8 JSON is JSON (RFC 8259 §8.1).
 */
export function isJsonMediaType(header: string | null | undefined): boolean {
  if (!header) return false;
  const [type, ...parameters] = header.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const eq = parameter.indexOf('=');
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') return true;
    const value = parameter
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    return value === 'utf-8' || value === 'utf8';
  });
}

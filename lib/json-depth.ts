// How deep a parsed JSON value nests, shared by the server and the browser (no dependencies).

// Whether a parsed JSON value nests deeper than `limit` ("{}" is 1, a scalar 0). Iterative, with two
// flat stacks and an early exit, so it is safe and cheap on any value JSON.parse returns.
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length) {
    const current = values.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(current)) {
      for (const item of current) {
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in current) {
        const item = (current as Record<string, unknown>)[key];
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

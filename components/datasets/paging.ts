// The case table renders its first rows and "Show more" adds a page: a Pro dataset holds up to 500
// cases, and rendering them all made the page slow to use.
export const casePageSize = 50;

// How many rows show and how many one more page adds (0: all shown).
export function casePaging(total: number, shown: number): { visible: number; next: number } {
  const visible = Math.min(total, shown);
  return { visible, next: Math.min(casePageSize, total - visible) };
}

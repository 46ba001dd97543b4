// Small English helpers shared by emails (server) and pages (client).

/** "an editor", "an admin", "a viewer". */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * A difference of two rates, in percentage points: "5 percentage points", "1 percentage point"
 * (a pass rate of 80 % falling 5 points is 75 %, not 76 %).
 */
export function percentagePoints(fraction: number): string {
  const points = Math.round(fraction * 1000) / 10;
  return `${points} percentage point${points === 1 ? '' : 's'}`;
}

// Small English helpers shared by emails (server) and pages (client).

/** "an editor", "an admin", "a viewer". */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

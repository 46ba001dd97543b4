// The password rules, shared by the account services (server/credentials/passwords.ts) and the
// sign-up form, which shows them beside another field's error without a second round trip.

/** Why `password` is too weak, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < 10) return 'Use at least 10 characters.';
  if (password.length > 200) return 'Use at most 200 characters.';
  if (!/[a-zA-Z]/.test(password) || !/[0-9\W_]/.test(password)) return 'Mix letters with digits or symbols.';
  if (/^(.)\1+$/.test(password)) return 'Do not repeat one character.';
  return null;
}

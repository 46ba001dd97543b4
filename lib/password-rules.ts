// The password rules, shared by the account services (server/credentials/passwords.ts) and the
// sign-up form, which shows them beside another field's error without a second round trip.

/** Why `password` is too weak, or null; with the account's `email`, also when it is the address. */
export function passwordProblem(password: string, email?: string): string | null {
  if (password.length < 10) return 'Use at least 10 characters.';
  if (password.length > 200) return 'Use at most 200 characters.';
  if (!/[a-zA-Z]/.test(password) || !/[0-9\W_]/.test(password)) return 'Mix letters with digits or symbols.';
  if (/^(.)\1+$/.test(password)) return 'Do not repeat one character.';
  // The address is the first thing anyone guessing tries.
  if (email && password.trim().toLowerCase() === email.trim().toLowerCase())
    return 'Do not use your email address as the password.';
  return null;
}

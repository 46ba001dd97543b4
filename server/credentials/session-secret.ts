// The production entry sets NEXTAUTH_SECRET before Next starts; `next dev` gets a fixed
// development-only secret so it runs without setup. In production an unset secret stays unset,
// and next-auth refuses to sign sessions rather than using a guessable key.
export function sessionSecret(): string | undefined {
  if (process.env.NEXTAUTH_SECRET) return process.env.NEXTAUTH_SECRET;
  if (process.env.NODE_ENV !== 'production') return 'promptloop-development-only-secret-do-not-use-in-production';
  return undefined;
}

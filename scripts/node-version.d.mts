export const requiredNode: string;
export function nodeVersionProblem(version: string, required?: string): string | null;
export function requireNode(): void;

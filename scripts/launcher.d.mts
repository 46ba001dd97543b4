export function stopWhenNpmExits(): void;

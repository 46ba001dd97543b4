// A pause for the engine's loops.
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

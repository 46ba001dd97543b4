export const downloadsDir: string;
export const clientPackages: Record<string, string>;
export function packClients(destination?: string): void;
export function clientsPacked(sourcesMtime: number): boolean;

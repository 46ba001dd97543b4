export type CruisedModule = { source: string; dependencies?: { resolved?: string }[] };
export type AreaKnot = {
  areas: string[];
  cycles: string[][];
  edges: { from: string; to: string; imports: string[] }[];
};
export function areaOf(source: string): string | null;
export function areaGraph(modules: CruisedModule[]): Map<string, Map<string, string[]>>;
export function areaCycles(modules: CruisedModule[], limit?: number): AreaKnot[];

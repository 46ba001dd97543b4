// Areas without cycles (docs/decisions.md, "## A1" → "### Areas without cycles"): the module-level
// no-circular rule of .dependency-cruiser.cjs cannot see two folders that import each other through
// different files, so this check lifts dependency-cruiser's module graph (same config, type-only
// imports included) to the graph of server areas and fails on any cycle between them.
//
// An area is a folder server/<area>/ (sub-folders belong to it: server/evals/engine/ is evals).
// Root files server/*.ts (errors, context, paging, ids, config, log, …) are shared infrastructure,
// not an area. An import of another area's schemas.ts does not count: schemas are contracts, the
// import-free leaves that components also use. Every other import counts.
//
// `node scripts/check-areas.mjs` (run by `npm run check:deps`): exit 1 listing each cycle.
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** server/<area>/… → area; anything else (root files, other folders) → null. */
export function areaOf(source) {
  const match = /^server\/([\w-]+)\//.exec(source);
  return match ? match[1] : null;
}

/** Whether an import of `to` from another area counts: an area's schemas.ts is a contract, not a dependency. */
function counts(to) {
  return !/^server\/[\w-]+\/schemas\.ts$/.test(to);
}

/**
 * The area graph of dependency-cruiser modules ([{ source, dependencies: [{ resolved }] }]):
 * Map from → Map to → [`file → file`] (the imports making the edge).
 */
export function areaGraph(modules) {
  const graph = new Map();
  for (const module of modules) {
    const from = areaOf(module.source);
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const dependency of module.dependencies ?? []) {
      const to = areaOf(dependency.resolved ?? '');
      if (!to || to === from || !counts(dependency.resolved)) continue;
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to).push(`${module.source} → ${dependency.resolved}`);
    }
  }
  return graph;
}

/** Strongly connected components with more than one area (Tarjan): each is one knot of cycles. */
function knots(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (area) => {
    indices.set(area, index);
    low.set(area, index);
    index++;
    stack.push(area);
    onStack.add(area);
    for (const to of graph.get(area)?.keys() ?? []) {
      if (!indices.has(to)) {
        visit(to);
        low.set(area, Math.min(low.get(area), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(area, Math.min(low.get(area), indices.get(to)));
      }
    }
    if (low.get(area) === indices.get(area)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== area);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const area of [...graph.keys()].sort()) if (!indices.has(area)) visit(area);
  return found;
}

/** The elementary cycles inside one knot, each as [a, b, …] (a the smallest name), at most `limit`. */
function cyclesIn(graph, component, limit) {
  const members = new Set(component);
  const cycles = [];
  for (const start of component) {
    const path = [start];
    const walk = (area) => {
      for (const to of graph.get(area)?.keys() ?? []) {
        if (cycles.length >= limit || !members.has(to)) continue;
        if (to === start) cycles.push([...path]);
        else if (to > start && !path.includes(to)) {
          path.push(to);
          walk(to);
          path.pop();
        }
      }
    };
    walk(start);
  }
  return cycles;
}

/** Every area cycle of the modules: [{ areas, cycles, edges: [{ from, to, imports }] }]. */
export function areaCycles(modules, limit = 50) {
  const graph = areaGraph(modules);
  return knots(graph).map((component) => ({
    areas: component,
    cycles: cyclesIn(graph, component, limit),
    edges: component.flatMap((from) =>
      [...graph.get(from)].filter(([to]) => component.includes(to)).map(([to, imports]) => ({ from, to, imports })),
    ),
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const output = execFileSync(
    'npx',
    ['--no-install', 'depcruise', '--config', '.dependency-cruiser.cjs', 'server', '--output-type', 'json'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const limit = 50;
  const found = areaCycles(JSON.parse(output).modules, limit);
  if (found.length === 0) {
    console.log('✔ no cycles between server areas (server/<area>/, schemas.ts imports excepted)');
    process.exit(0);
  }
  for (const knot of found) {
    console.error(`✘ areas in a cycle: ${knot.areas.join(', ')}`);
    for (const cycle of knot.cycles) console.error(`    cycle: ${[...cycle, cycle[0]].join(' → ')}`);
    if (knot.cycles.length >= limit)
      console.error(`    … (the first ${limit} cycles; the edges below are all of them)`);
    console.error('  edges inside it (move the code to the area that owns it):');
    for (const edge of knot.edges) {
      console.error(`    ${edge.from} → ${edge.to}`);
      for (const line of edge.imports) console.error(`        ${line}`);
    }
  }
  console.error(`\n✘ ${found.reduce((n, knot) => n + knot.cycles.length, 0)} area cycle(s) in ${found.length} knot(s)`);
  process.exit(1);
}

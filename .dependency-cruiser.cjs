// Dependency rules of DESIGN.md ("Layers", "Conventions"), checked on every import in the tree by
// `npm run check:deps` (run by `npm test`, so by CI). Paths are relative to the repository root.
// Type-only imports count too (tsPreCompilationDeps): a cycle made of types is still two modules
// that cannot be understood apart, and breaking it costs one move to the owner's schemas.ts.
// no-circular sees modules only; scripts/check-areas.mjs (also in `npm run check:deps`) lifts this
// graph to the server areas (server/<area>/) and fails on a cycle between two folders.

/** The edges: they may import services, never the reverse. server/main.ts is the process entry. */
const edges = '^server/(api|trpc|mcp)/';
const serverEntry = '^server/main\\.ts$';

/** What the CLI bundle may take from server/ (the same list cli/build.mjs checks at build time). */
const cliServerAllowed = require('./cli/server-allowlist.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only ones included: move the shared piece to the module that owns it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'services-not-to-edges',
      severity: 'error',
      comment:
        'Services (server/** except the edges and server/main.ts) never import server/api, server/trpc, server/mcp, app/ or components/.',
      from: { path: '^server/', pathNot: [edges, serverEntry] },
      to: { path: ['^server/(api|trpc|mcp)/', '^app/', '^components/'] },
    },
    {
      name: 'components-only-schemas-from-server',
      severity: 'error',
      comment:
        'components/ import from server/ only schemas.ts files and the router types of server/trpc/root (type-only).',
      from: { path: '^components/' },
      to: { path: '^server/', pathNot: ['^server/[\\w/-]+/schemas\\.ts$', '^server/trpc/root\\.ts$'] },
    },
    {
      name: 'components-router-types-only',
      severity: 'error',
      comment: 'components/ may import server/trpc/root for its router types only, as a type-only import.',
      from: { path: '^components/' },
      to: { path: '^server/trpc/root\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'db-not-to-upper-layers',
      severity: 'error',
      comment:
        'db/ is the bottom layer (app → server → db): it imports nothing from server/, app/, components/, lib/, cli/ or sdk/.',
      from: { path: '^db/' },
      to: { path: ['^server/', '^app/', '^components/', '^lib/', '^cli/', '^sdk/'] },
    },
    {
      name: 'cli-client-only',
      severity: 'error',
      comment:
        'cli/ is a client of the operations: no db/, app/, components/, lib/, and from server/ only what its bundle allows (cli/build.mjs).',
      from: { path: '^cli/' },
      to: { path: ['^db/', '^app/', '^components/', '^lib/', '^server/'], pathNot: cliServerAllowed },
    },
    {
      name: 'sdk-self-contained',
      severity: 'error',
      comment:
        'sdk/src is published alone: it imports only its own files (and no package at all, it uses only fetch); the one exception is the @promptloop/sdk/otel entry (sdk/src/otel.ts), which imports @opentelemetry/api, its optional peer dependency.',
      from: { path: '^sdk/src/', pathNot: '^sdk/src/otel\\.ts$' },
      to: { pathNot: '^sdk/src/' },
    },
    {
      name: 'sdk-otel-only-api',
      severity: 'error',
      comment: "The @promptloop/sdk/otel entry imports the SDK's own files and @opentelemetry/api, nothing else.",
      from: { path: '^sdk/src/otel\\.ts$' },
      to: { pathNot: ['^sdk/src/', '^node_modules/@opentelemetry/api/'] },
    },
    {
      name: 'sdk-main-entry-without-otel',
      severity: 'error',
      comment:
        'Only the @promptloop/sdk/otel entry may depend on @opentelemetry/api: no other SDK file imports sdk/src/otel.ts.',
      from: { path: '^sdk/src/', pathNot: '^sdk/src/otel\\.ts$' },
      to: { path: '^sdk/src/otel\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing on disk.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)\\.next/', '^\\.data/', '^sdk/dist/', '^cli/dist/', '\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.mts', '.js', '.mjs', '.cjs', '.jsx', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};

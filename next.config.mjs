import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const ownDirs = ['server', 'db'].map((dir) => path.join(root, dir) + path.sep);

// One module graph per process (DESIGN.md "Processes", docs/deploy.md): the production server bundle
// does not carry its own copy of server/ and db/. An import of them from app/, components/, lib/ or
// proxy.ts becomes a runtime `import()` of the same TypeScript file URL, loaded by Node's ESM loader
// under tsx, so the page and route bundles share the module instances of the entry (server/main.ts).
// The browser bundle still bundles what it imports (server/*/schemas.ts for zod and types), and
// `next dev` bundles as before (no entry runs beside it).
function externalizeServer() {
  return async ({ context, request, getResolve }) => {
    if (!request || !(request.startsWith('@/server/') || request.startsWith('@/db/') || request.startsWith('.')))
      return undefined;
    if (ownDirs.some((dir) => (context ?? '').startsWith(dir))) return undefined;
    let file;
    try {
      file = await getResolve()(context, request);
    } catch {
      return undefined;
    }
    if (typeof file !== 'string' || !ownDirs.some((dir) => file.startsWith(dir))) return undefined;
    return `import ${pathToFileURL(file).href}`;
  };
}

// The production build runs our route modules (page data collection) in worker processes that import
// server/ at runtime: they need tsx too. Turbopack has no externals hook, so a Turbopack production
// build would carry a second copy of server/ (a second database handle): it is refused.
function checkBuild() {
  if (process.env.TURBOPACK) {
    throw new Error(
      'Build with `npm run build` (next build --webpack): the production server loads server/ and db/ once, outside the bundle (docs/deploy.md).',
    );
  }
  if (!/--import[= ]tsx\b/.test(process.env.NODE_OPTIONS ?? ''))
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import tsx`.trim();
}

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Packages with native/wasm assets or worker threads must stay outside the server bundle.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'pino', 'jose', 'stripe'],
  poweredByHeader: false,
  reactStrictMode: true,
  typescript: { ignoreBuildErrors: false },
  // `next dev` runs Turbopack and bundles everything; `next build --webpack` applies the above.
  turbopack: {},
  webpack(config, { isServer, nextRuntime, dev }) {
    if (dev || !isServer || nextRuntime !== 'nodejs') return config;
    const existing = config.externals ? (Array.isArray(config.externals) ? config.externals : [config.externals]) : [];
    config.externals = [externalizeServer(), ...existing];
    return config;
  },
  // API.md "Input hygiene": no page may be framed (clickjacking), no response content-sniffed, and
  // no full URL (with its query) leaks to other sites in Referer.
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Content-Security-Policy', value: "frame-ancestors 'none'" },
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
        ],
      },
    ];
  },
};
export default function config(phase) {
  if (phase === 'phase-production-build') checkBuild();
  return nextConfig;
}

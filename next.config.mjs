/** @type {import('next').NextConfig} */
const nextConfig = {
  // Packages with native/wasm assets or worker threads must stay outside the server bundle.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'pino', 'jose'],
  poweredByHeader: false,
  reactStrictMode: true,
  typescript: { ignoreBuildErrors: false },
};
export default nextConfig;

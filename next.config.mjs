/** @type {import('next').NextConfig} */
const nextConfig = {
  // Packages with native/wasm assets or worker threads must stay outside the server bundle.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'pino', 'jose', 'stripe'],
  poweredByHeader: false,
  reactStrictMode: true,
  typescript: { ignoreBuildErrors: false },
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
export default nextConfig;

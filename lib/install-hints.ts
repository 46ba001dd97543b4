// Where the CLI and the SDK come from (README "CLI", "SDK"): the app serves their npm tarballs at
// /downloads (server/api/downloads.ts), so a snippet installs them from the server it talks to.
// Snippets run `promptloop`, never `npx promptloop`: that unscoped name is not ours on the npm
// registry, and npx would fetch whatever is published under it (with the client secret in its
// environment).
export const cliTarballUrl = (origin: string) => `${origin}/downloads/promptloop-cli.tgz`;
const sdkTarballUrl = (origin: string) => `${origin}/downloads/promptloop-sdk.tgz`;

export const cliInstallHint = (origin: string) => `npm install -g ${cliTarballUrl(origin)}   # the CLI, once`;
export const sdkInstallHint = (origin: string) => `// npm install ${sdkTarballUrl(origin)}`;

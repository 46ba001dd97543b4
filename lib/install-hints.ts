// Where the CLI and the SDK come from (README "CLI", "SDK"): tarballs packed from a Promptloop
// checkout, until they are in your registry. Snippets run `promptloop`, never `npx promptloop`: that
// unscoped name is not ours on the npm registry, and npx would fetch whatever is published under it
// (with the client secret in its environment).
export const cliInstallHint =
  '# The CLI, once: `npm pack ./cli` in a Promptloop checkout, then npm install -g ./promptloop-cli-0.1.0.tgz';
export const sdkInstallHint =
  '// npm install ./promptloop-sdk-0.1.0.tgz  (`npm pack ./sdk` in a Promptloop checkout; README "SDK")';

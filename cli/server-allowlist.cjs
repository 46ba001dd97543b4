// What the CLI bundle may take from server/: the operation table, schemas and a few pure helpers.
// One list for the build (cli/build.mjs refuses anything else in the bundle) and the dependency rules
// (.dependency-cruiser.cjs), so the two cannot drift.
module.exports = [
  '^server/operations/',
  '^server/[\\w-]+/schemas\\.ts$',
  '^server/(errors|paging|input-hygiene|numbers|text)\\.ts$',
  '^server/models/routes\\.ts$',
];

// The roles of a member, most powerful first. A pure module (no database code), so schemas and the
// operation table (server/operations, imported by the CLI) can name them.
export const roles = ['admin', 'editor', 'viewer'] as const;
export type Role = (typeof roles)[number];

// Who may do what inside an organization: the roles, the one permission table and `can`. Pure (no
// imports, no I/O), and named schemas.ts so that components may import it (DESIGN.md: components
// import from server/ only schemas.ts files): the dashboard hides what the server would refuse by
// asking the same table, never by comparing role names itself.

// The roles of a member, most powerful first.
export const roles = ['admin', 'editor', 'viewer'] as const;
export type Role = (typeof roles)[number];

const rank: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

// The least role each permission needs.
export const permissions = {
  'organization.read': 'viewer',
  'organization.rename': 'admin',
  'organization.deletionLink': 'admin',
  'organization.delete': 'admin',
  'members.read': 'viewer',
  'members.manage': 'admin',
  'audit.read': 'admin',
  'prompts.read': 'viewer',
  'prompts.write': 'editor',
  // API.md "Safe releases": the release policy is admin-only to write, and so is an override.
  'prompts.releasePolicy': 'admin',
  'playground.run': 'editor',
  // API.md marks ingestion keys neither admin-only nor read-only: like retrieval keys, any member
  // lists them and editors create and revoke them (the spec's only admin-only operations are rename,
  // deletion link and checkout).
  'ingestionKeys.read': 'viewer',
  'ingestionKeys.manage': 'editor',
  'serviceAccounts.manage': 'admin',
  'webhooks.manage': 'admin',
  'traces.read': 'viewer',
  'warnings.read': 'viewer',
  'warnings.dismiss': 'editor',
  'billing.read': 'viewer',
  'billing.checkout': 'admin',
  'billing.portal': 'admin',
  // API.md: cancel renewal is not admin-only; a viewer gets 403 forbidden.
  'billing.cancelRenewal': 'editor',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof permissions;

export function hasRole(role: Role, needed: Role): boolean {
  return rank[role] >= rank[needed];
}

export function can(role: Role, permission: Permission): boolean {
  return hasRole(role, permissions[permission]);
}

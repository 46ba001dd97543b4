import { describe, expect, it } from 'vitest';
import { can, permissions, roles, type Permission, type Role } from '@/server/auth/schemas';

// The whole role × permission table, written out (API.md: roles admin, editor, viewer; writable
// access = admin or editor; admin-only operations; cancel renewal open to editors).
const expected: Record<Permission, Record<Role, boolean>> = {
  'organization.read': { admin: true, editor: true, viewer: true },
  'organization.rename': { admin: true, editor: false, viewer: false },
  'organization.deletionLink': { admin: true, editor: false, viewer: false },
  'organization.delete': { admin: true, editor: false, viewer: false },
  'members.read': { admin: true, editor: true, viewer: true },
  'members.manage': { admin: true, editor: false, viewer: false },
  'audit.read': { admin: true, editor: false, viewer: false },
  'prompts.read': { admin: true, editor: true, viewer: true },
  'prompts.write': { admin: true, editor: true, viewer: false },
  'prompts.releasePolicy': { admin: true, editor: false, viewer: false },
  'playground.run': { admin: true, editor: true, viewer: false },
  'ingestionKeys.read': { admin: true, editor: true, viewer: true },
  'ingestionKeys.manage': { admin: true, editor: true, viewer: false },
  'serviceAccounts.manage': { admin: true, editor: false, viewer: false },
  'webhooks.manage': { admin: true, editor: false, viewer: false },
  'traces.read': { admin: true, editor: true, viewer: true },
  'warnings.read': { admin: true, editor: true, viewer: true },
  'warnings.dismiss': { admin: true, editor: true, viewer: false },
  'billing.read': { admin: true, editor: true, viewer: true },
  'billing.checkout': { admin: true, editor: false, viewer: false },
  'billing.portal': { admin: true, editor: false, viewer: false },
  'billing.cancelRenewal': { admin: true, editor: true, viewer: false },
};

describe('can(role, permission)', () => {
  it('covers every permission of the table', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(permissions).sort());
    expect([...roles].sort()).toEqual(['admin', 'editor', 'viewer']);
  });

  for (const permission of Object.keys(expected) as Permission[]) {
    for (const role of roles) {
      it(`${role} ${expected[permission][role] ? 'may' : 'may not'} ${permission}`, () => {
        expect(can(role, permission)).toBe(expected[permission][role]);
      });
    }
  }

  it('is monotonic: whatever a role may do, every more powerful role may do too', () => {
    for (const permission of Object.keys(permissions) as Permission[]) {
      if (can('viewer', permission)) expect(can('editor', permission)).toBe(true);
      if (can('editor', permission)) expect(can('admin', permission)).toBe(true);
    }
  });
});

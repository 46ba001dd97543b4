import { describe, expect, it } from 'vitest';
import { addedToOrganizationEmail, invitationEmail } from '@/server/email/templates';

// Names people chose go into subjects, headings and bodies as one line of plain words.
describe('email templates', () => {
  it('put chosen names on one line: no line breaks, control characters or bidirectional overrides', () => {
    const invitation = invitationEmail('bob@example.test', {
      organization: 'Acme\r\nBcc: spy@evil.example',
      role: 'viewer',
      inviter: 'Alice\u202e\tX-Injected: 1\u0007',
      url: 'https://promptloop.example/invitation?token=t',
    });
    expect(invitation.subject).toBe('Alice X-Injected: 1 invited you to Acme Bcc: spy@evil.example on Promptloop');
    expect(invitation.subject).not.toMatch(/[\r\n\u0007\u202e\t]/);
    // The layout's own line breaks only: none from the names.
    expect(invitation.html).not.toMatch(/[\r\u0007\u202e\t]|Acme\n/);
    const [firstParagraph] = invitation.text.split('\n\n');
    expect(firstParagraph).toBe(
      'Alice X-Injected: 1 invited you to join Acme Bcc: spy@evil.example on Promptloop as a viewer. Open the link, then sign in or create an account with this address to accept.',
    );
    expect(invitation.text).toContain('Join Acme Bcc: spy@evil.example: https://promptloop.example/invitation?token=t');

    const added = addedToOrganizationEmail('bob@example.test', {
      organization: '  Line\none  ',
      role: 'admin',
      url: 'https://promptloop.example/organizations/org_1',
    });
    expect(added.subject).toBe('You were added to Line one on Promptloop');
    expect(added.html).toContain(
      '<h1 style="margin:0 0 16px;font-size:20px;color:#1f2430">You were added to Line one</h1>',
    );
  });
});

import { withArticle } from '@/lib/words';
import type { EmailMessage } from './mailer';

// Plain text first; the HTML is the same words with a button, safe for any mail client.

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

function layout(
  heading: string,
  paragraphs: string[],
  action?: { label: string; url: string },
  footer?: string,
): string {
  const body = paragraphs
    .map((p) => `<p style="margin:0 0 16px;font-size:15px;line-height:1.5;color:#1f2430">${escapeHtml(p)}</p>`)
    .join('');
  const button = action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(action.url)}" style="display:inline-block;background:#4f46e5;color:#ffffff;text-decoration:none;font-weight:600;padding:10px 18px;border-radius:8px;font-size:15px">${escapeHtml(action.label)}</a></p>` +
      `<p style="margin:0 0 16px;font-size:13px;line-height:1.5;color:#5b6172">Or paste this link into your browser:<br><a href="${escapeHtml(action.url)}" style="color:#4f46e5;word-break:break-all">${escapeHtml(action.url)}</a></p>`
    : '';
  const note = footer
    ? `<p style="margin:24px 0 0;font-size:13px;line-height:1.5;color:#5b6172">${escapeHtml(footer)}</p>`
    : '';
  return `<!doctype html><html><body style="margin:0;padding:24px;background:#f5f6f8;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif">
<div style="max-width:520px;margin:0 auto;background:#ffffff;border:1px solid #e3e5ea;border-radius:12px;padding:32px">
<p style="margin:0 0 24px;font-weight:700;font-size:16px;color:#1f2430">Promptloop</p>
<h1 style="margin:0 0 16px;font-size:20px;color:#1f2430">${escapeHtml(heading)}</h1>
${body}${button}${note}
</div></body></html>`;
}

function text(paragraphs: string[], action?: { label: string; url: string }, footer?: string): string {
  return (
    [
      ...paragraphs,
      ...(action ? [`${action.label}: ${action.url}`] : []),
      ...(footer ? [footer] : []),
      '— Promptloop',
    ].join('\n\n') + '\n'
  );
}

// Names people chose (an organization's, an inviter's) may hold line breaks, other control
// characters or bidirectional overrides: in an email each piece of text is one line of plain words.
function oneLine(value: string): string {
  return value
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

function message(
  to: string,
  rawSubject: string,
  rawHeading: string,
  rawParagraphs: string[],
  action?: { label: string; url: string },
  rawFooter?: string,
): EmailMessage {
  const [subject, heading] = [oneLine(rawSubject), oneLine(rawHeading)];
  const paragraphs = rawParagraphs.map(oneLine);
  const footer = rawFooter === undefined ? undefined : oneLine(rawFooter);
  action = action && { label: oneLine(action.label), url: action.url };
  return { to, subject, text: text(paragraphs, action, footer), html: layout(heading, paragraphs, action, footer) };
}

export function verificationEmail(to: string, url: string): EmailMessage {
  return message(
    to,
    'Confirm your email address for Promptloop',
    'Confirm your email address',
    ['Confirm that this address belongs to you, so teammates can add you to their organizations.'],
    { label: 'Confirm email address', url },
    'The link works once and expires in 24 hours. If you did not create a Promptloop account, ignore this email.',
  );
}

export function passwordResetEmail(to: string, url: string): EmailMessage {
  return message(
    to,
    'Reset your Promptloop password',
    'Reset your password',
    [
      'Someone asked to reset the password of the Promptloop account that uses this address. Choose a new password with the link below.',
    ],
    { label: 'Choose a new password', url },
    'The link works once and expires in 1 hour. If you did not ask for it, ignore this email: your password stays the same.',
  );
}

export function addedToOrganizationEmail(
  to: string,
  input: { organization: string; role: string; url: string },
): EmailMessage {
  return message(
    to,
    `You were added to ${input.organization} on Promptloop`,
    `You were added to ${input.organization}`,
    [`You were added to ${input.organization} as ${withArticle(input.role)}. Sign in to Promptloop to open it.`],
    { label: `Open ${input.organization}`, url: input.url },
  );
}

export function invitationEmail(
  to: string,
  input: { organization: string; role: string; inviter: string | null; url: string },
): EmailMessage {
  const who = input.inviter ? `${input.inviter} invited you` : 'You were invited';
  return message(
    to,
    `${who} to ${input.organization} on Promptloop`,
    `Join ${input.organization} on Promptloop`,
    [
      `${who} to join ${input.organization} on Promptloop as ${withArticle(input.role)}. Open the link, then sign in or create an account with this address to accept.`,
    ],
    { label: `Join ${input.organization}`, url: input.url },
    'The link expires in 7 days. If you did not expect this invitation, ignore this email.',
  );
}

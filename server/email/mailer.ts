import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { config } from '../config';
import { log } from '../log';

// Account email (API.md "Accounts and email"): SMTP through nodemailer when SMTP_URL is set, else
// one JSON file per message in .data/outbox/ plus a log line, so a single machine works alone.

export type EmailMessage = { to: string; subject: string; text: string; html: string };

export const outboxDir = () => path.resolve(process.cwd(), '.data', 'outbox');

let transport: Transporter | undefined;
function smtp(url: string): Transporter {
  transport ??= nodemailer.createTransport(url);
  return transport;
}

async function writeToOutbox(message: EmailMessage, from: string): Promise<string> {
  const dir = outboxDir();
  await mkdir(dir, { recursive: true });
  const file = path.join(
    dir,
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`,
  );
  await writeFile(file, JSON.stringify({ from, ...message, createdAt: new Date().toISOString() }, null, 2), {
    mode: 0o600,
  });
  return file;
}

// Never throws: a failed send is logged and the flow that asked for it stays usable (resend).
// Callers send after their transaction has committed.
export async function sendEmail(message: EmailMessage): Promise<boolean> {
  const cfg = config();
  try {
    if (cfg.smtpUrl) {
      await smtp(cfg.smtpUrl).sendMail({
        from: cfg.emailFrom,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      log.info({ email: { to: message.to, subject: message.subject } }, 'email sent');
    } else {
      const file = await writeToOutbox(message, cfg.emailFrom);
      // API.md: without SMTP_URL emails are written to the log and to .data/outbox/, so whoever runs
      // a single-machine install can follow a link from either (the text holds the links).
      log.info(
        { email: { to: message.to, subject: message.subject, outbox: file, text: message.text } },
        'email written to the outbox (SMTP_URL is not set)',
      );
    }
    return true;
  } catch (error) {
    log.error({ email: { to: message.to, subject: message.subject }, err: error }, 'email could not be sent');
    return false;
  }
}

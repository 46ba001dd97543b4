import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export type ReceivedEmail = { from: string; to: string[]; subject: string; raw: string; body: string; links: string[] };

// Undoes the quoted-printable transfer encoding nodemailer uses for long lines.
function decodeQuotedPrintable(value: string): string {
  return value
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function parse(raw: string, from: string, to: string[]): ReceivedEmail {
  const [head] = raw.split(/\r?\n\r?\n/);
  const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)$/im.exec(head)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
  const body = decodeQuotedPrintable(raw);
  const links = [...new Set(body.match(/https?:\/\/[^\s"<>]+/g) ?? [])];
  return { from, to, subject, raw, body, links };
}

// A real SMTP server on a free local port: the app talks to it with nodemailer, exactly as it would
// to a provider. Credentials are required, so a test proves SMTP_URL's user and password are used.
// `refuses(address)`: recipients the server answers 550 (mailbox unavailable), as a provider does.
export async function startSmtpServer(
  credentials = { user: 'promptloop', pass: 'smtp-test-secret' },
  refuses: (address: string) => boolean = () => false,
) {
  const received: ReceivedEmail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    onRcptTo(address, _session, callback) {
      if (refuses(address.address)) {
        const error = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
        return callback(error);
      }
      callback();
    },
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.pass)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push(
          parse(
            Buffer.concat(chunks).toString('utf8'),
            from,
            session.envelope.rcptTo.map((r) => r.address),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${credentials.user}:${credentials.pass}@127.0.0.1:${port}`,
    received,
    // Emails go out in the background: wait until one for `to` (matching `subject`) has arrived.
    async waitFor(to: string, subject?: RegExp, count = 1): Promise<ReceivedEmail[]> {
      for (let i = 0; i < 400; i++) {
        const found = received.filter((m) => m.to.includes(to) && (!subject || subject.test(m.subject)));
        if (found.length >= count) return found;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no email to ${to}${subject ? ` matching ${subject}` : ''} arrived`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function linkTo(email: ReceivedEmail, path: string): string {
  const link = email.links.find((l) => new URL(l).pathname === path);
  if (!link) throw new Error(`no ${path} link in: ${email.body}`);
  return link;
}

export const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

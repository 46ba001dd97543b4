import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
  fsyncSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Where the CLI keeps its files: PROMPTLOOP_CONFIG_DIR, else the platform's user config directory
// + /promptloop (XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support on macOS,
// %APPDATA% on Windows). The directory is 0700 and every file 0600, written to a temporary file
// and renamed, so a crash never leaves half a token file and a reader never sees one.

/** Environment variables as the CLI reads them. */
export type Env = Record<string, string | undefined>;

export function configDir(
  env: Env = process.env,
  platform: NodeJS.Platform = process.platform,
  home = os.homedir(),
): string {
  if (env.PROMPTLOOP_CONFIG_DIR) return path.resolve(env.PROMPTLOOP_CONFIG_DIR);
  if (platform === 'win32') return path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'promptloop');
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'promptloop');
  return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'promptloop');
}

function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
}

export function readJsonFile<T>(file: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${file} is not valid JSON; delete it (tokens: run \`promptloop login\` again).`);
  }
}

/** Writes `text` to `file` (mode 0600) through a temporary file in the same directory and a rename. */
function writeFileAtomic(file: string, text: string, mode = 0o600): void {
  ensureDir(path.dirname(file));
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    if (process.platform !== 'win32') chmodSync(temp, mode);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function writeJsonFile(file: string, value: unknown): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` holding `<file>.lock` (created exclusively), so two CLI processes never refresh the
 * same rotating refresh token at once (the second would be taken for a replay and revoke the
 * family). A lock older than `staleMs` is taken over (its holder died).
 */
async function withFileLock<T>(
  file: string,
  work: () => Promise<T>,
  options: { waitMs?: number; staleMs?: number } = {},
): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + (options.waitMs ?? 15_000);
  const staleMs = options.staleMs ?? 30_000;
  ensureDir(path.dirname(file));
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > staleMs) unlinkSync(lock);
      } catch {
        // removed meanwhile: try again
      }
      if (Date.now() > deadline)
        throw new Error(`Another promptloop process holds ${lock}; if none is running, delete that file.`);
      await sleep(50 + Math.random() * 100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/**
 * The server's base URL as a key: no trailing slash, and no trailing `/api/v1` — that URL names the same
 * server (the CLI appends `/api/v1` itself), as the SDK's `baseUrl` accepts it, so a login is found
 * whichever of the two forms a command is given.
 */
export function normalizeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url: "${url}" is not a URL (e.g. http://localhost:3000).`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`--url: use an http(s) URL, not ${parsed.protocol}`);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}`;
}

// ---- The two files: credentials.json (tokens) and config.json (organization context) ----

export type StoredTokens = {
  issuer: string;
  clientId: string;
  resource: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  accessToken: string;
  refreshToken: string | null;
  /** Epoch ms when the access token expires. */
  expiresAt: number;
  scope: string;
};

type CredentialsFile = { servers: Record<string, StoredTokens> };
type SettingsFile = { servers: Record<string, { organizationId?: string }> };

export class Store {
  readonly dir: string;
  constructor(
    readonly url: string,
    env: Env = process.env,
  ) {
    this.dir = configDir(env);
  }

  get credentialsFile(): string {
    return path.join(this.dir, 'credentials.json');
  }
  get settingsFile(): string {
    return path.join(this.dir, 'config.json');
  }

  tokens(): StoredTokens | undefined {
    return readJsonFile<CredentialsFile>(this.credentialsFile)?.servers?.[this.url];
  }

  saveTokens(tokens: StoredTokens | undefined): void {
    const current = readJsonFile<CredentialsFile>(this.credentialsFile) ?? { servers: {} };
    const servers = { ...current.servers };
    if (tokens) servers[this.url] = tokens;
    else delete servers[this.url];
    writeJsonFile(this.credentialsFile, { servers });
  }

  organizationId(): string | undefined {
    return readJsonFile<SettingsFile>(this.settingsFile)?.servers?.[this.url]?.organizationId;
  }

  saveOrganizationId(organizationId: string | undefined): void {
    const current = readJsonFile<SettingsFile>(this.settingsFile) ?? { servers: {} };
    const servers = { ...current.servers, [this.url]: { ...current.servers?.[this.url], organizationId } };
    if (organizationId === undefined) delete servers[this.url].organizationId;
    writeJsonFile(this.settingsFile, { servers });
  }

  lockTokens<T>(work: () => Promise<T>): Promise<T> {
    return withFileLock(this.credentialsFile, work);
  }
}

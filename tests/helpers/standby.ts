import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';

// A Postgres primary and its streaming hot standby, both on this machine in one temporary directory
// (the retrieval replica tests and `npm run bench -- replica`). The pair has its own primary, made
// with initdb, because replication connections need a pg_hba.conf line that the machine's shared
// cluster may not have (Debian's default has none) and no test may change that cluster's settings;
// initdb's own pg_hba.conf allows them on 127.0.0.1. The standby is made the way an operator makes
// one (docs/deploy.md): pg_basebackup -R -X stream, then pg_ctl start.

const run = promisify(execFile);

// The directory holding initdb, pg_ctl and pg_basebackup (Debian keeps them off PATH), or null.
export function postgresBinaries(): string | null {
  const wanted = ['initdb', 'pg_ctl', 'pg_basebackup'];
  const has = (dir: string) => wanted.every((name) => existsSync(path.join(dir, name)));
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const version of versions) if (has(path.join(root, version, 'bin'))) return path.join(root, version, 'bin');
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && has(dir)) return dir;
  return null;
}

export type StandbyPair = {
  primaryUrl: string;
  standbyUrl: string;
  // Stops / starts applying WAL on the standby (it keeps serving reads of what it has applied).
  pauseReplay: () => Promise<void>;
  resumeReplay: () => Promise<void>;
  // A clean shutdown; started again, it resumes streaming within a few seconds.
  stopStandby: () => Promise<void>;
  startStandby: () => Promise<void>;
  // Stops both servers and removes the directory; safe to call twice.
  stop: () => Promise<void>;
};

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function freePorts(from: number, to: number, count: number): Promise<number[]> {
  const found: number[] = [];
  for (let port = from; port <= to && found.length < count; port++) if (await portFree(port)) found.push(port);
  if (found.length < count) throw new Error(`no ${count} free ports in ${from}–${to}`);
  return found;
}

/**
 * Makes and starts the pair on two free ports of `ports` (inclusive). `applyDelayMs`: the standby
 * applies each commit that long after it was made (recovery_min_apply_delay), as a standby on a
 * busy or distant machine lags; 0 by default. pg_ctl refuses to run as root: as root, every server
 * command runs as the `postgres` user, who owns the directory.
 */
export async function startStandbyPair(
  options: { ports?: [number, number]; applyDelayMs?: number } = {},
): Promise<StandbyPair> {
  const ports = options.ports ?? [5440, 5449];
  const bin = postgresBinaries();
  if (!bin) throw new Error('Postgres server binaries (initdb, pg_ctl, pg_basebackup) not found');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'promptloop-standby-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]) : run(path.join(bin, tool), args);
  const [primaryPort, standbyPort] = await freePorts(ports[0], ports[1], 2);
  const primaryDir = path.join(dir, 'primary');
  const standbyDir = path.join(dir, 'standby');
  const serverOptions = (port: number) =>
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=50`;
  const start = (dataDir: string, port: number, extra = '') =>
    pg('pg_ctl', ['-D', dataDir, '-o', serverOptions(port) + extra, '-l', `${dataDir}.log`, '-w', '-t', '60', 'start']);
  const standbyOptions = options.applyDelayMs ? ` -c recovery_min_apply_delay=${options.applyDelayMs}ms` : '';
  const stopServer = (dataDir: string, mode: 'fast' | 'immediate' = 'immediate') =>
    existsSync(path.join(dataDir, 'postmaster.pid'))
      ? pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']).then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();

  // If this process dies without stopping them (a killed test worker), a detached watcher does.
  const watcher = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ` +
        [standbyDir, primaryDir]
          .map((d) => `${asRoot ? 'runuser -u postgres -- ' : ''}${path.join(bin, 'pg_ctl')} -D ${d} -m immediate stop`)
          .join('; ') +
        `; rm -rf ${dir}`,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watcher.unref();

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopServer(standbyDir);
    await stopServer(primaryDir);
    rmSync(dir, { recursive: true, force: true });
    watcher.kill();
  };

  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`;
  const onStandby = async (statement: string) => {
    const client = postgres(standbyUrl, { max: 1, onnotice: () => {} });
    try {
      await client.unsafe(statement);
    } finally {
      await client.end();
    }
  };
  try {
    await pg('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await start(primaryDir, primaryPort);
    await pg('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standbyDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    await start(standbyDir, standbyPort, standbyOptions);
    return {
      primaryUrl,
      standbyUrl,
      pauseReplay: () => onStandby('select pg_wal_replay_pause()'),
      resumeReplay: () => onStandby('select pg_wal_replay_resume()'),
      stopStandby: () => stopServer(standbyDir, 'fast'),
      startStandby: () => start(standbyDir, standbyPort, standbyOptions).then(() => undefined),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

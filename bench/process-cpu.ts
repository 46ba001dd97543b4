import { readdirSync, readFileSync } from 'node:fs';
import type postgres from 'postgres';

// CPU time of the processes a benchmark phase keeps busy, from /proc (Linux; elsewhere every figure
// is 0): this process (the load generator), the ingest process and its node:cluster workers, the
// Postgres backends connected to the benchmark's database, and the whole machine (to see what else
// ran). On a two-core machine shared by client and server, CPU per span says where the time goes
// better than throughput does.

export type CpuSplit = { generator: number; ingest: number; postgres: number; machine: number };

const ticksPerSecond = 100; // USER_HZ on Linux

function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces: the fields after it start past the last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

// utime + stime in ms (fields 14 and 15 of /proc/<pid>/stat; 12 and 13 after the name).
function cpuMs(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond : 0;
}

function childrenOf(parent: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => Number(statFields(pid)?.[1]) === parent);
}

// Busy CPU of the whole machine (every core, every process), to show how much of it was ours.
function machineMs(): number {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
    return ((user + nice + system + irq + softirq + steal) * 1000) / ticksPerSecond;
  } catch {
    return 0;
  }
}

type Snapshot = {
  generator: number;
  ingest: Map<number, number>;
  postgres: Map<number, number>;
  machine: number;
};

async function snapshot(sql: postgres.Sql, ingestPid: number): Promise<Snapshot> {
  const backends = await sql<{ pid: number }[]>`select pid from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid()`;
  const usage = process.cpuUsage();
  return {
    generator: (usage.user + usage.system) / 1000,
    ingest: new Map([ingestPid, ...childrenOf(ingestPid)].map((pid) => [pid, cpuMs(pid)])),
    postgres: new Map(backends.map(({ pid }) => [pid, cpuMs(pid)])),
    machine: machineMs(),
  };
}

// A process that appeared between the two snapshots spent all of its CPU inside the window.
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** CPU ms of each group between `fromMs` and `toMs` after now, sampled by timers while `work` runs. */
export async function cpuDuring<T>(
  sql: postgres.Sql,
  ingestPid: number,
  fromMs: number,
  toMs: number,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuSplit }> {
  const at = (ms: number) =>
    new Promise<Snapshot>((resolve) => setTimeout(() => resolve(snapshot(sql, ingestPid)), ms));
  const [start, end, result] = await Promise.all([at(fromMs), at(toMs), work()]);
  return {
    result,
    cpu: {
      generator: end.generator - start.generator,
      ingest: spent(start.ingest, end.ingest),
      postgres: spent(start.postgres, end.postgres),
      machine: end.machine - start.machine,
    },
  };
}

/** CPU ms of each group from just before `work` starts to just after it ends (work of a second or more). */
export async function cpuAround<T>(
  sql: postgres.Sql,
  serverPid: number,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuSplit }> {
  const start = await snapshot(sql, serverPid);
  const result = await work();
  const end = await snapshot(sql, serverPid);
  return {
    result,
    cpu: {
      generator: end.generator - start.generator,
      ingest: spent(start.ingest, end.ingest),
      postgres: spent(start.postgres, end.postgres),
      machine: end.machine - start.machine,
    },
  };
}

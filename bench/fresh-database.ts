import postgres from 'postgres';

// Shared by the benchmarks: a fresh database on BENCH_DATABASE_URL's server for one run, and percentiles.

const baseUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

// Creates a database, runs `fn` with its URL, and drops it afterwards whatever happened.
export async function withFreshDatabase<T>(fn: (databaseUrl: string) => Promise<T>): Promise<T> {
  const name = `promptloop_bench_${Date.now()}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

// The value at percentile `p` of ascending `sorted` values.
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

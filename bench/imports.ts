import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate, openDatabase } from '../db/client';
import { newId } from '../server/ids';
import { importMaxBodyBytes } from '../server/imports/schemas';
import { withFreshDatabase } from './fresh-database';
import { startWebServer } from './web-server';
import { bundleDocument, countRows, openAiDocument, type DocumentShape } from './import-documents';
import { cpuAround, type CpuSplit } from './process-cpu';

// `npm run bench -- imports`: POST /organizations/{org}/imports and GET …/export through the
// production entry (`server/main.ts --role=web`, Next; needs `npm run build`) on a fresh database.
// Each round imports a new bundle of just under 8 MiB (100 prompts × 20 versions, 50 cases each),
// dry-runs another, imports an OpenAI document of the same size, and stores a fourth bundle with
// plain postgres-js multi-row INSERTs in one transaction (the baseline: JSON.parse and the same
// rows, no validation, no HTTP). Then the organization is exported page by page, against the same
// pages read with one query per table and JSON.stringify. Exits 1 when a target is missed.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const shape: DocumentShape = {
  prompts: Number(process.env.BENCH_IMPORT_PROMPTS ?? 100),
  versionsPerPrompt: Number(process.env.BENCH_IMPORT_VERSIONS ?? 20),
  casesPerPrompt: Number(process.env.BENCH_IMPORT_CASES ?? 50),
  // Room for the request's own fields ({ source, document }) under the route's limit.
  bytes: Number(process.env.BENCH_IMPORT_BYTES ?? importMaxBodyBytes - 1024),
};
// Targets (docs/performance.md "M9 import and export").
const maxImportSeconds = 10;
const minImportRatio = 0.25;
const minExportRatio = 0.2;
const mib = 1024 * 1024;

type Timing = { seconds: number; bytes: number; rows: number; prompts: number; cpu?: CpuSplit };

function load(): string {
  const [one, five, fifteen] = loadavg();
  return `load average ${one.toFixed(2)}, ${five.toFixed(2)}, ${fifteen.toFixed(2)}`;
}

type Api = (method: string, route: string, body?: string) => Promise<{ status: number; text: string; ms: number }>;

function apiOf(baseUrl: string, token: string): Api {
  return async (method, route, body) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body,
    });
    const text = await response.text();
    return { status: response.status, text, ms: performance.now() - started };
  };
}

type Report = {
  prompts: { action: string; promptId: string | null; versions: number; labels: number; cases: number }[];
};

// The request body, serialized before the clock starts (a client's own cost).
function importBody(source: 'promptloop' | 'openai', document: unknown, dryRun = false): string {
  return JSON.stringify({ source, document, ...(dryRun ? { dryRun: true } : {}) });
}

// One import over HTTP: the request from its first byte sent to the report's last byte received.
async function timedImport(
  api: Api,
  organizationId: string,
  source: 'promptloop' | 'openai',
  document: unknown,
  body: string,
): Promise<Timing> {
  const dryRun = body.endsWith('"dryRun":true}');
  const reply = await api('POST', `/organizations/${organizationId}/imports`, body);
  if (reply.status !== (dryRun ? 200 : 201))
    throw new Error(`import (${source}${dryRun ? ', dry run' : ''}): ${reply.status} ${reply.text.slice(0, 1000)}`);
  const report = JSON.parse(reply.text) as Report;
  const rows = report.prompts.reduce((sum, p) => sum + p.versions + p.labels + p.cases, 0);
  const expected = countRows(source, document);
  const created = report.prompts.filter((p) => p.action === 'create' && (p.promptId !== null) !== dryRun).length;
  if (rows !== expected || created !== report.prompts.length)
    throw new Error(`import (${source}): the report counts ${rows} rows and ${created} creations, not ${expected}`);
  return { seconds: reply.ms / 1000, bytes: Buffer.byteLength(body), rows, prompts: report.prompts.length };
}

type BundleJson = {
  prompts: {
    name: string;
    state: 'setup' | 'active' | 'archived';
    versions: { version: number; content: unknown; createdAt: string }[];
    labels: { label: string; version: number }[];
    scoring: { method: string; judgeModelRouteId?: string | null; rubric?: string | null } | null;
    dataset: { cases: { input: string; expectedOutput: string; inputFormat: string; referenceFormat: string }[] };
  }[];
};

function* chunks<T>(rows: T[], size = 1_000): Generator<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

// The floor: the request body parsed and the same rows as the importer writes (prompts, versions,
// labels, label history, datasets, cases), 1,000 rows per INSERT, in one transaction.
async function baselineImport(
  sql: postgres.Sql,
  organizationId: string,
  document: unknown,
  text: string,
): Promise<Timing> {
  const started = performance.now();
  const bundle = (JSON.parse(text) as { document: BundleJson }).document;
  const now = new Date();
  const user = 'usr_bench';
  const rows = {
    prompts: [] as Record<string, unknown>[],
    prompt_versions: [] as Record<string, unknown>[],
    prompt_labels: [] as Record<string, unknown>[],
    prompt_label_history: [] as Record<string, unknown>[],
    datasets: [] as Record<string, unknown>[],
    dataset_cases: [] as Record<string, unknown>[],
  };
  for (const prompt of bundle.prompts) {
    const promptId = newId('prm');
    const { rubricIsDefault: _, ...scoring } = (prompt.scoring ?? { method: 'expected' }) as Record<string, unknown>;
    rows.prompts.push({
      id: promptId,
      organization_id: organizationId,
      name: prompt.name,
      state: prompt.state,
      version_count: prompt.versions.length,
      created_by: user,
      created_at: now,
      scoring,
    });
    const versionIds = new Map<number, string>();
    for (const v of prompt.versions) {
      const id = newId('ver');
      versionIds.set(v.version, id);
      rows.prompt_versions.push({
        id,
        organization_id: organizationId,
        prompt_id: promptId,
        number: v.version,
        content: v.content,
        created_by: user,
        created_by_client: 'bench',
        created_at: new Date(v.createdAt),
      });
    }
    for (const l of prompt.labels) {
      const versionId = versionIds.get(l.version);
      rows.prompt_labels.push({
        organization_id: organizationId,
        prompt_id: promptId,
        label: l.label,
        version_id: versionId,
        updated_by: user,
      });
      rows.prompt_label_history.push({
        organization_id: organizationId,
        prompt_id: promptId,
        label: l.label,
        to_version_id: versionId,
        user_id: user,
        client_id: 'bench',
        source: 'import',
      });
    }
    const datasetId = newId('ds');
    rows.datasets.push({ id: datasetId, organization_id: organizationId, prompt_id: promptId });
    prompt.dataset.cases.forEach((c, i) =>
      rows.dataset_cases.push({
        id: newId('case'),
        organization_id: organizationId,
        dataset_id: datasetId,
        position: i + 1,
        input: c.input,
        expected_output: c.expectedOutput,
        input_format: c.inputFormat,
        reference_format: c.referenceFormat,
      }),
    );
  }
  await sql.begin(async (tx) => {
    for (const [table, all] of Object.entries(rows))
      for (const part of chunks(all)) await tx`insert into ${tx(table)} ${tx(part as never, Object.keys(part[0]))}`;
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    seconds,
    bytes: Buffer.byteLength(text),
    rows: countRows('promptloop', document),
    prompts: bundle.prompts.length,
  };
}

// Every page of the organization export, following nextCursor; time is the sum of the requests.
async function timedExport(api: Api, organizationId: string): Promise<Timing & { pages: number }> {
  const total = { seconds: 0, bytes: 0, rows: 0, prompts: 0, pages: 0 };
  let cursor: string | null = null;
  do {
    const reply = await api(
      'GET',
      `/organizations/${organizationId}/export${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (reply.status !== 200) throw new Error(`export: ${reply.status} ${reply.text.slice(0, 500)}`);
    const page = JSON.parse(reply.text) as BundleJson & { nextCursor: string | null };
    total.seconds += reply.ms / 1000;
    total.bytes += Buffer.byteLength(reply.text);
    total.prompts += page.prompts.length;
    total.rows += page.prompts.reduce((s, p) => s + p.versions.length + p.labels.length + p.dataset.cases.length, 0);
    total.pages++;
    cursor = page.nextCursor;
  } while (cursor);
  return total;
}

// The export's floor: the same pages of 25 prompts, each read with one query per table (no
// per-prompt queries, no access checks, no HTTP) and written with JSON.stringify.
async function baselineExport(sql: postgres.Sql, organizationId: string): Promise<Timing & { pages: number }> {
  const total = { seconds: 0, bytes: 0, rows: 0, prompts: 0, pages: 0 };
  let after: { created_at: Date; id: string } | null = null;
  for (;;) {
    const started = performance.now();
    const page: { id: string; created_at: Date; name: string; state: string; scoring: unknown }[] = after
      ? await sql`select id, created_at, name, state, scoring from prompts where organization_id = ${organizationId}
          and (created_at, id) > (${after.created_at}, ${after.id}) order by created_at, id limit 25`
      : await sql`select id, created_at, name, state, scoring from prompts where organization_id = ${organizationId}
          order by created_at, id limit 25`;
    if (!page.length) break;
    const ids = page.map((p) => p.id);
    const [versions, labels, history, cases] = await Promise.all([
      sql`select prompt_id, number as version, content, created_at from prompt_versions where prompt_id = any(${ids}) order by prompt_id, number`,
      sql`select l.prompt_id, l.label, v.number as version from prompt_labels l join prompt_versions v on v.id = l.version_id
          where l.prompt_id = any(${ids}) order by l.prompt_id, l.label`,
      sql`select h.prompt_id, h.label, f.number as "fromVersion", t.number as "toVersion", h.at from prompt_label_history h
          left join prompt_versions f on f.id = h.from_version_id left join prompt_versions t on t.id = h.to_version_id
          where h.prompt_id = any(${ids}) order by h.prompt_id, h.id`,
      sql`select d.prompt_id, c.input, c.expected_output as "expectedOutput", c.input_format as "inputFormat",
          c.reference_format as "referenceFormat" from dataset_cases c join datasets d on d.id = c.dataset_id
          where d.prompt_id = any(${ids}) order by d.prompt_id, c.position`,
    ]);
    const of = <T extends { prompt_id: string }>(rows: T[], id: string) =>
      rows.filter((r) => r.prompt_id === id).map(({ prompt_id: _, ...rest }) => rest);
    const bundle = {
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: new Date().toISOString(),
      prompts: page.map((p) => ({
        name: p.name,
        state: p.state,
        versions: of(versions as never, p.id),
        labels: of(labels as never, p.id),
        labelHistory: of(history as never, p.id),
        scoring: p.scoring,
        dataset: { cases: of(cases as never, p.id) },
      })),
      nextCursor: `${page.at(-1)!.created_at.toISOString()}|${page.at(-1)!.id}`,
    };
    const text = JSON.stringify(bundle);
    total.seconds += (performance.now() - started) / 1000;
    total.bytes += Buffer.byteLength(text);
    total.prompts += page.length;
    total.rows += versions.length + labels.length + cases.length;
    total.pages++;
    after = page.at(-1)!;
  }
  return total;
}

type Summary = Timing & { count: number; median: number; cpu: CpuSplit };

function merge(timings: Timing[]): Summary {
  const sorted = timings.map((t) => t.seconds).sort((a, b) => a - b);
  const sum = (of: (t: Timing) => number) => timings.reduce((s, t) => s + of(t), 0);
  return {
    count: timings.length,
    seconds: sum((t) => t.seconds),
    bytes: sum((t) => t.bytes),
    rows: sum((t) => t.rows),
    prompts: sum((t) => t.prompts),
    median: sorted[Math.floor((sorted.length - 1) / 2)],
    cpu: {
      generator: sum((t) => t.cpu?.generator ?? 0),
      ingest: sum((t) => t.cpu?.ingest ?? 0),
      postgres: sum((t) => t.cpu?.postgres ?? 0),
      machine: sum((t) => t.cpu?.machine ?? 0),
    },
  };
}

// Rates over the summed time; CPU per operation: the server process, the database's Postgres
// backends, this process (the client, or the whole baseline) and the machine (what else ran).
function line(label: string, t: Summary, unit: string): void {
  const per = (ms: number) => (ms / t.count / 1000).toFixed(2).padStart(5);
  console.log(
    `${label.padEnd(46)} ${t.median.toFixed(2).padStart(5)} s/${unit} (median)  ${(t.bytes / mib / t.seconds).toFixed(2).padStart(6)} MiB/s  ${(t.rows / t.seconds).toFixed(0).padStart(6)} rows/s  ${(t.prompts / t.seconds).toFixed(1).padStart(6)} prompts/s   CPU s/${unit}: server ${per(t.cpu.ingest)}  Postgres ${per(t.cpu.postgres)}  bench ${per(t.cpu.generator)}  machine ${per(t.cpu.machine)}`,
  );
}

export async function main(): Promise<boolean> {
  if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) {
    console.error('No production build: run `NEXT_TELEMETRY_DISABLED=1 npm run build` first.');
    return false;
  }
  return withFreshDatabase(run);
}

async function run(databaseUrl: string): Promise<boolean> {
  const database = await openDatabase({ url: databaseUrl, max: 1 });
  await migrate(database);
  await database.close();
  const sql = postgres(databaseUrl, { max: 4, onnotice: () => {} });
  // Reads the CPU figures; its own backend is the one left out of them.
  const probe = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": the server writes a CPU profile when it exits.
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const server = await startWebServer(databaseUrl, {
    nodeArgs,
    // The routes the documents name (the defaults, set so that the environment cannot change them).
    env: { OPENAI_MODELS: 'gpt-4o-mini,gpt-4o', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  const { child, baseUrl, appUrl, issuer } = server;
  try {
    console.log(`uptime: ${execFileSync('uptime').toString().trim()}`);
    const api = apiOf(baseUrl, await issuer.sign('bench-importer', `${appUrl}/api/v1`));
    const created = await api('POST', '/organizations', JSON.stringify({ name: 'Import bench' }));
    if (created.status !== 201) throw new Error(`create organization: ${created.status} ${created.text}`);
    const organizationId = (JSON.parse(created.text) as { id: string }).id;
    // 50 cases per prompt need the Pro plan's dataset capacity.
    await sql`update organizations set plan = 'pro' where id = ${organizationId}`;
    const baselineOrg = newId('org');
    await sql`insert into organizations (id, name, plan, created_by) values (${baselineOrg}, 'Baseline', 'pro', 'bench')`;

    type Side = 'imported' | 'dryRun' | 'openai' | 'baseline';
    const measure = async (side: Side, size: DocumentShape, seed: number): Promise<Timing> => {
      const source = side === 'openai' ? 'openai' : 'promptloop';
      const document = source === 'openai' ? openAiDocument(size, seed) : bundleDocument(size, seed);
      const body = importBody(source, document, side === 'dryRun');
      const { result, cpu } = await cpuAround(probe, child.pid!, () =>
        side === 'baseline'
          ? baselineImport(sql, baselineOrg, document, body)
          : timedImport(api, organizationId, source, document, body),
      );
      return { ...result, cpu };
    };
    // Warm-up (not counted): the route's first load, the token's first check, the JIT.
    const small = { ...shape, prompts: 5, bytes: 200_000 };
    for (const side of ['imported', 'openai', 'baseline'] as const) await measure(side, small, 1_000_000 + side.length);

    console.log(
      `Import and export benchmark: ${rounds} rounds; documents of ${(shape.bytes / mib).toFixed(2)} MiB, ${shape.prompts} prompts × ${shape.versionsPerPrompt} versions, ${shape.casesPerPrompt} cases each (bundle); server/main.ts --role=web (NODE_ENV=production); ${load()}`,
    );
    const sides: Record<Side, Timing[]> = { imported: [], dryRun: [], openai: [], baseline: [] };
    const order = ['imported', 'dryRun', 'openai', 'baseline'] as const;
    for (let round = 0; round < rounds; round++) {
      // A new seed per document: new names (nothing is skipped) and new text (nothing cached).
      for (const side of round % 2 === 0 ? order : [...order].reverse()) {
        const timing = await measure(side, shape, round * 10 + order.indexOf(side));
        sides[side].push(timing);
        console.log(`  round ${round + 1} ${side.padEnd(8)} ${timing.seconds.toFixed(2)} s`);
      }
    }
    const imported = merge(sides.imported);
    const baseline = merge(sides.baseline);
    line('POST …/imports, promptloop bundle', imported, 'import');
    line('POST …/imports, promptloop bundle, dryRun', merge(sides.dryRun), 'import');
    line('POST …/imports, OpenAI Chat Completions', merge(sides.openai), 'import');
    line('baseline: JSON.parse + postgres-js INSERTs', baseline, 'import');

    // The whole organization (every import above, warm-up included), page by page.
    const exportedRun = await cpuAround(probe, child.pid!, () => timedExport(api, organizationId));
    const floorRun = await cpuAround(probe, child.pid!, () => baselineExport(sql, organizationId));
    const exported = merge([{ ...exportedRun.result, cpu: exportedRun.cpu }]);
    const floor = merge([{ ...floorRun.result, cpu: floorRun.cpu }]);
    line(`GET …/export, ${exportedRun.result.pages} pages`, exported, 'export');
    line(`baseline: the same ${floorRun.result.pages} pages, 5 queries each`, floor, 'export');
    console.log(`after: ${load()}`);

    const importRatio = imported.rows / imported.seconds / (baseline.rows / baseline.seconds);
    const exportRatio = exported.bytes / exported.seconds / (floor.bytes / floor.seconds);
    const checks: [string, boolean][] = [
      [
        `a full bundle import < ${maxImportSeconds} s: median ${imported.median.toFixed(2)} s`,
        imported.median < maxImportSeconds,
      ],
      [`import ≥ ${minImportRatio}× the baseline's rows/s: ${importRatio.toFixed(2)}×`, importRatio >= minImportRatio],
      [
        `export ≥ ${minExportRatio}× the baseline's MiB/s: ${exportRatio.toFixed(2)}×`,
        exportRatio >= minExportRatio && exported.prompts === floor.prompts,
      ],
    ];
    for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'} ${text}`);
    return checks.every(([, ok]) => ok);
  } finally {
    await server.stop();
    await sql.end({ timeout: 5 });
    await probe.end({ timeout: 5 });
  }
}

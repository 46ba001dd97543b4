import { hash } from 'node:crypto';
import { readerConnections, type Database, type Db, type Reader } from '@/db/client';
import { log } from '../log';
import { coalesce } from './coalesce';
import { preparedRows, preparedValues } from '@/db/prepared';

// The one statement of a retrieval (GET /api/v1/prompts/{id}): the key by its digest (not
// revoked), its prompt, and the version the selector resolves to on that prompt — read fresh on
// every request, so a revocation, a label move or a split's change counts from the very next one on
// every process. A split label (API.md "Safe releases") picks its version in the same statement:
// the request's bucket of 0..99 — a stable hash of split id + subject, or the random `bucket` drawn
// by the caller when there is no subject — joined to the split version owning it ([lo, hi)).
// Versions are immutable: their content and createdAt come back only when the chosen version is
// not among `knownVersionIds` (the versions whose bodies this process holds for the same prompt and
// selector), so a steady state ships a few ids and small fields, even when a split alternates
// between its versions, and a label move still costs one round trip.

export type Selector = { kind: 'label'; label: string } | { kind: 'version'; number: number } | null;

export type RetrievalRow = {
  keyId: string;
  organizationId: string;
  keyPromptId: string;
  name: string;
  archived: boolean;
  versionId: string | null;
  version: number | null;
  // Only when versionId is not one of knownVersionIds.
  content: string | null;
  createdAt: string | null;
  // A split label: the split, the chosen version's weight and the buckets it owns ([lo, hi)); null otherwise.
  splitId: string | null;
  weight: number | null;
  lo: number | null;
  hi: number | null;
};

// The bucket of a subject: the first 32 bits of md5(split id || subject), sign bit cleared, mod
// 100. The same on Postgres and PGlite (both have md5 and bit-string casts); null without a subject.
const bucketOf = (subject: string) =>
  `((('x' || substr(md5(l.split_id || ${subject}), 1, 8))::bit(32)::int4 & 2147483647) % 100)`;

// The same bucket computed here (server/retrieval/answer-cache.ts: a split label's answer kept in
// memory is found by it). Node hashes a string as UTF-8, as Postgres does its text.
export function subjectBucket(splitId: string, subject: string): number {
  return (Number.parseInt(hash('md5', splitId + subject, 'hex').slice(0, 8), 16) & 0x7fffffff) % 100;
}

// The columns of a RetrievalRow, from the chosen version's columns and the ids held (`known`).
type VersionColumns = { id: string; number: string; content: string; createdAt: string };
const columns = (
  v: VersionColumns,
  known: string,
  splitId: string,
  weight: string,
  range: string,
) => `k.id, k.organization_id, k.prompt_id, p.name,
  p.state = 'archived', ${v.id}, ${v.number},
  case when ${v.id} <> all(${known}) then ${v.content}::text end,
  case when ${v.id} <> all(${known}) then to_char(${v.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end,
  ${splitId}, ${weight}, ${range}`;
const versionColumns = (v: string): VersionColumns => ({
  id: `${v}.id`,
  number: `${v}.number`,
  content: `${v}.content`,
  createdAt: `${v}.created_at`,
});

// Two shapes of the one statement (label or version), each a chain of primary-key or unique-index
// lookups: retrieval_keys (secret_digest) → prompts (id) → prompt_labels (prompt_id, label) →
// prompt_split_versions (split_id, lo, hi) when the label is split → prompt_versions (id), or
// prompt_versions (prompt_id, number). With no valid selector the label shape runs with a null
// label: the key alone (the request is refused after authentication).
const byLabel = `select ${columns(versionColumns('v'), '$4::text[]', 'l.split_id', 's.weight', 's.lo, s.hi')}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_labels l on l.prompt_id = k.prompt_id and k.prompt_id = $2 and l.label = $3::text
left join lateral (select coalesce(${bucketOf('$5::text')}, $6::int4) as bucket) b on l.split_id is not null
left join prompt_split_versions s on s.split_id = l.split_id and s.lo <= b.bucket and b.bucket < s.hi
left join prompt_versions v on v.id = coalesce(s.version_id, l.version_id)
where k.secret_digest = $1 and k.revoked_at is null`;

const byVersion = `select ${columns(versionColumns('v'), '$4::text[]', 'null::text', 'null::int4', 'null::int4, null::int4')}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_versions v on v.prompt_id = k.prompt_id and k.prompt_id = $2 and v.number = $3::int4
where k.secret_digest = $1 and k.revoked_at is null`;

// Many lookups in ONE statement (server/retrieval/coalesce.ts): the inputs as one JSON array whose
// elements carry the position (`n`) of the request they stand for, and the answers as ONE JSON text
// (an array of `[n, …columns]`): one parameter and one value cross the driver, however many lookups
// the group holds (arrays of parameters and a row per lookup cost the driver more than the rest of
// the request: docs/performance.md, P2). Per input row, the chain of one lookup in a LATERAL
// subquery: its LIMIT keeps the planner from flattening it into one join over all rows, which it
// would plan with hash joins over whole tables (measured: ~500 µs of Postgres CPU per request on
// the benchmark's small tables); planned for one row, every step is an index probe, as in the
// single statements. Both shapes in one chain: a label request has a label and no number, a version
// request the reverse, a request without a valid selector neither, so at most one of the two
// version joins (v by label, w by number) matches.
const either = (column: string) => `coalesce(v.${column}, w.${column})`;
const byGroup = `select coalesce(json_agg(x.a), '[]')::text
from json_to_recordset($1::text::json) as r(n int4, digest text, prompt_id text, label text, number int4, subject text, bucket int4, known text[])
join lateral (select json_build_array(r.n, ${columns(
  { id: either('id'), number: either('number'), content: either('content'), createdAt: either('created_at') },
  'r.known',
  'l.split_id',
  's.weight',
  's.lo, s.hi',
)}) as a
  from retrieval_keys k
  join prompts p on p.id = k.prompt_id
  left join prompt_labels l on r.label is not null and l.prompt_id = k.prompt_id and k.prompt_id = r.prompt_id and l.label = r.label
  left join lateral (select coalesce(${bucketOf('r.subject')}, r.bucket) as bucket) b on l.split_id is not null
  left join prompt_split_versions s on s.split_id = l.split_id and s.lo <= b.bucket and b.bucket < s.hi
  left join prompt_versions v on v.id = coalesce(s.version_id, l.version_id)
  left join prompt_versions w on r.number is not null and w.prompt_id = k.prompt_id and k.prompt_id = r.prompt_id and w.number = r.number
  where k.secret_digest = r.digest and k.revoked_at is null
  limit 1) x on true`;

export type RetrievalInput = {
  digest: string;
  promptId: string;
  selector: Selector;
  knownVersionIds: string[];
  // A split label's bucket: by the subject when there is one, else `bucket` (0..99, random).
  subject: string | null;
  bucket: number;
};

function selectorValue(selector: Selector): string | number | null {
  return selector === null ? null : selector.kind === 'version' ? selector.number : selector.label;
}

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

function rowOf(row: unknown[], at: number): RetrievalRow {
  return {
    keyId: row[at] as string,
    organizationId: row[at + 1] as string,
    keyPromptId: row[at + 2] as string,
    name: row[at + 3] as string,
    archived: row[at + 4] === true,
    versionId: (row[at + 5] as string | null) ?? null,
    version: row[at + 6] === null || row[at + 6] === undefined ? null : Number(row[at + 6]),
    content: (row[at + 7] as string | null) ?? null,
    createdAt: (row[at + 8] as string | null) ?? null,
    splitId: (row[at + 9] as string | null) ?? null,
    weight: numberOrNull(row[at + 10]),
    lo: numberOrNull(row[at + 11]),
    hi: numberOrNull(row[at + 12]),
  };
}

// One lookup, one statement of its shape.
export async function lookupOne(handle: Db | Reader, input: RetrievalInput): Promise<RetrievalRow | null> {
  const { selector } = input;
  const rows = await preparedValues(
    handle,
    selector?.kind === 'version' ? byVersion : byLabel,
    selector?.kind === 'version'
      ? [input.digest, input.promptId, selectorValue(selector), input.knownVersionIds]
      : [input.digest, input.promptId, selectorValue(selector), input.knownVersionIds, input.subject, input.bucket],
  );
  return rows[0] ? rowOf(rows[0], 0) : null;
}

// Many lookups, one statement: the answers in the order of `inputs` (null: no key, or revoked).
export async function lookupGroup(handle: Db | Reader, inputs: RetrievalInput[]): Promise<(RetrievalRow | null)[]> {
  const rows = await preparedValues(handle, byGroup, [
    JSON.stringify(
      inputs.map((input, i) => ({
        n: i + 1,
        digest: input.digest,
        prompt_id: input.promptId,
        label: input.selector?.kind === 'label' ? input.selector.label : null,
        number: input.selector?.kind === 'version' ? input.selector.number : null,
        subject: input.subject,
        bucket: input.bucket,
        known: input.knownVersionIds,
      })),
    ),
  ]);
  const answers: (RetrievalRow | null)[] = inputs.map(() => null);
  for (const row of JSON.parse(rows[0][0] as string) as unknown[][]) {
    const n = Number(row[0]);
    if (!(n >= 1 && n <= inputs.length) || answers[n - 1] !== null)
      throw new Error(`retrieval: a grouped lookup answered position ${n} of ${inputs.length} twice or out of range`);
    answers[n - 1] = rowOf(row, 1);
  }
  return answers;
}

// Lookups that arrive while one is in flight on the same pool are sent together
// (server/retrieval/coalesce.ts; one coalescer per pool: the reader, or PGlite's handle).
const coalescers = new WeakMap<object, (input: RetrievalInput) => Promise<RetrievalRow | null>>();

export function lookupRetrieval(database: Database, input: RetrievalInput): Promise<RetrievalRow | null> {
  // postgres-js: the reader pool when there is one (docs/performance.md, M5).
  const handle = database.reader?.() ?? database.db;
  let lookup = coalescers.get(handle);
  if (lookup === undefined) {
    lookup = coalesce<RetrievalInput, RetrievalRow | null>({
      one: (one) => lookupOne(handle, one),
      group: (group) => lookupGroup(handle, group),
      inFlight: database.reader ? readerConnections() : 1,
      maxGroup: 256,
      // Each of the group's lookups is then answered on its own; said, so that a group statement
      // that keeps failing (every lookup then costing two statements) does not go unnoticed.
      onGroupError: (error, size) =>
        log.warn({ err: error, lookups: size }, 'retrieval: a grouped lookup failed; sending its lookups one by one'),
    });
    coalescers.set(handle, lookup);
  }
  return lookup(input);
}

// Record every key's latest use in one statement; last_used_at never moves backwards.
const touchStatement = `
update retrieval_keys k set last_used_at = u.at
from json_to_recordset($1::json) as u(id text, at timestamptz)
where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at)`;

export async function touchRetrievalKeys(database: Database, uses: Map<string, number>): Promise<void> {
  if (uses.size === 0) return;
  const rows = JSON.stringify([...uses].map(([id, at]) => ({ id, at: new Date(at).toISOString() })));
  await preparedRows(database.db, touchStatement, [rows]);
}

// Retrievals of split labels counted in memory (server/retrieval/activity.ts), `minute` in Unix ms.
export type SplitCount = { splitId: string; versionId: string; organizationId: string; minute: number; count: number };

// Adds the counts to retrieval_split_counts in one statement. Counts of an organization deleted
// meanwhile are dropped (the join), so one gone tenant cannot fail every later flush.
const addCountsStatement = `
insert into retrieval_split_counts (split_id, version_id, organization_id, minute, count)
select c.split_id, c.version_id, c.organization_id, c.minute, c.count
from json_to_recordset($1::json) as c(split_id text, version_id text, organization_id text, minute timestamptz, count bigint)
join organizations o on o.id = c.organization_id
on conflict (split_id, version_id, minute) do update set count = retrieval_split_counts.count + excluded.count`;

export async function addSplitCounts(database: Database, counts: SplitCount[]): Promise<void> {
  if (counts.length === 0) return;
  const rows = JSON.stringify(
    counts.map((c) => ({
      split_id: c.splitId,
      version_id: c.versionId,
      organization_id: c.organizationId,
      minute: new Date(c.minute).toISOString(),
      count: c.count,
    })),
  );
  await preparedRows(database.db, addCountsStatement, [rows]);
}

import type { Database } from '@/db/client';
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
  // A split label: the split and the chosen version's weight; null otherwise.
  splitId: string | null;
  weight: number | null;
};

// The bucket of a subject: the first 32 bits of md5(split id || subject), sign bit cleared, mod
// 100. The same on Postgres and PGlite (both have md5 and bit-string casts); null without a subject.
const subjectBucket = `((('x' || substr(md5(l.split_id || $5::text), 1, 8))::bit(32)::int4 & 2147483647) % 100)`;

const columns = (version: string, splitId: string, weight: string) => `k.id, k.organization_id, k.prompt_id, p.name,
  p.state = 'archived', ${version}.id, ${version}.number,
  case when ${version}.id <> all($4::text[]) then ${version}.content::text end,
  case when ${version}.id <> all($4::text[]) then to_char(${version}.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end,
  ${splitId}, ${weight}`;

// Two shapes of the one statement (label or version), each a chain of primary-key or unique-index
// lookups: retrieval_keys (secret_digest) → prompts (id) → prompt_labels (prompt_id, label) →
// prompt_split_versions (split_id, lo, hi) when the label is split → prompt_versions (id), or
// prompt_versions (prompt_id, number). With no valid selector the label shape runs with a null
// label: the key alone (the request is refused after authentication).
const byLabel = `select ${columns('v', 'l.split_id', 's.weight')}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_labels l on l.prompt_id = k.prompt_id and k.prompt_id = $2 and l.label = $3::text
left join lateral (select coalesce(${subjectBucket}, $6::int4) as bucket) b on l.split_id is not null
left join prompt_split_versions s on s.split_id = l.split_id and s.lo <= b.bucket and b.bucket < s.hi
left join prompt_versions v on v.id = coalesce(s.version_id, l.version_id)
where k.secret_digest = $1 and k.revoked_at is null`;

const byVersion = `select ${columns('v', 'null::text', 'null::int4')}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_versions v on v.prompt_id = k.prompt_id and k.prompt_id = $2 and v.number = $3::int4
where k.secret_digest = $1 and k.revoked_at is null`;

export async function lookupRetrieval(
  database: Database,
  input: {
    digest: string;
    promptId: string;
    selector: Selector;
    knownVersionIds: string[];
    // A split label's bucket: by the subject when there is one, else `bucket` (0..99, random).
    subject: string | null;
    bucket: number;
  },
): Promise<RetrievalRow | null> {
  const { selector } = input;
  const selectorValue = selector === null ? null : selector.kind === 'version' ? selector.number : selector.label;
  // postgres-js: the reader pool when there is one (docs/performance.md, M5).
  const rows = await preparedValues(
    database.reader?.() ?? database.db,
    selector?.kind === 'version' ? byVersion : byLabel,
    selector?.kind === 'version'
      ? [input.digest, input.promptId, selectorValue, input.knownVersionIds]
      : [input.digest, input.promptId, selectorValue, input.knownVersionIds, input.subject, input.bucket],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    keyId: row[0] as string,
    organizationId: row[1] as string,
    keyPromptId: row[2] as string,
    name: row[3] as string,
    archived: row[4] === true,
    versionId: (row[5] as string | null) ?? null,
    version: row[6] === null || row[6] === undefined ? null : Number(row[6]),
    content: (row[7] as string | null) ?? null,
    createdAt: (row[8] as string | null) ?? null,
    splitId: (row[9] as string | null) ?? null,
    weight: row[10] === null || row[10] === undefined ? null : Number(row[10]),
  };
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

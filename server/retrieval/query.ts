import type { Database } from '@/db/client';
import { preparedRows, preparedValues } from '@/db/prepared';

// The one statement of a retrieval (GET /api/v1/prompts/{id}): the key by its digest (not
// revoked), its prompt, and the version the selector resolves to on that prompt — read fresh on
// every request, so a revocation or a label move counts from the very next one on every process.
// Versions are immutable: their content and createdAt come back only when the version differs
// from `knownVersionId` (the version this process last served for the same prompt and selector,
// whose body it holds), so a steady state ships a few ids and small fields, and a label move still
// costs one round trip.

export type Selector = { kind: 'label'; label: string } | { kind: 'version'; number: number } | null;

export type RetrievalRow = {
  keyId: string;
  organizationId: string;
  keyPromptId: string;
  name: string;
  archived: boolean;
  versionId: string | null;
  version: number | null;
  // Only when versionId differs from knownVersionId.
  content: string | null;
  createdAt: string | null;
};

// Two shapes of the one statement (label or version), each a chain of primary-key or unique-index
// lookups: retrieval_keys (secret_digest) → prompts (id) → prompt_labels (prompt_id, label) →
// prompt_versions (id), or prompt_versions (prompt_id, number). With no valid selector the label
// shape runs with a null label: the key alone (the request is refused after authentication).
const columns = `k.id, k.organization_id, k.prompt_id, p.name, p.state = 'archived', v.id, v.number,
  case when v.id is distinct from $4 then v.content::text end,
  case when v.id is distinct from $4 then to_char(v.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`;

const byLabel = `select ${columns}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_labels l on l.prompt_id = k.prompt_id and k.prompt_id = $2 and l.label = $3::text
left join prompt_versions v on v.id = l.version_id
where k.secret_digest = $1 and k.revoked_at is null`;

const byVersion = `select ${columns}
from retrieval_keys k
join prompts p on p.id = k.prompt_id
left join prompt_versions v on v.prompt_id = k.prompt_id and k.prompt_id = $2 and v.number = $3::int4
where k.secret_digest = $1 and k.revoked_at is null`;

export async function lookupRetrieval(
  database: Database,
  input: { digest: string; promptId: string; selector: Selector; knownVersionId: string | null },
): Promise<RetrievalRow | null> {
  const { selector } = input;
  // postgres-js: the reader pool when there is one (docs/performance.md, M5).
  const rows = await preparedValues(
    database.reader?.() ?? database.db,
    selector?.kind === 'version' ? byVersion : byLabel,
    [
      input.digest,
      input.promptId,
      selector === null ? null : selector.kind === 'version' ? selector.number : selector.label,
      input.knownVersionId,
    ],
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

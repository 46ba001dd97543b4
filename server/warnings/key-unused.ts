import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { raiseWarnings, type RaisedWarning } from './service';

// key_unused: a retrieval or ingestion key that is not revoked and was never used within
// `neverUsedDays` of its creation, or has not been used for `idleDays`. One idle stretch is one
// occurrence (occurrenceId = the lastUsedAt it started from), so the check can run every few
// minutes without counting the same stretch again, and a dismissed warning stays dismissed until
// the key is used and then falls idle again.
const neverUsedDays = 7;
const idleDays = 30;

// Bounds per run: anything past them is picked up by the next run.
const raiseLimit = 500;
const resolveLimit = 1000;

type Candidate = {
  keyType: 'retrieval' | 'ingestion';
  id: string | null;
  organizationId: string;
  promptId: string | null;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  episode: string;
  resolved: number;
};

const day = (iso: string) => iso.slice(0, 10);

function warningFor(c: Candidate & { id: string }, now: Date): RaisedWarning {
  const label = c.keyType === 'retrieval' ? 'Retrieval key' : 'Ingestion key';
  const what = `${label} “${c.name}” (${c.prefix}…)`;
  const message = c.lastUsedAt
    ? `${what} has not been used since ${day(c.lastUsedAt)}. Revoke it if nothing needs it.`
    : `${what} has never been used since it was created on ${day(c.createdAt)}. Revoke it if nothing needs it.`;
  return {
    organizationId: c.organizationId,
    kind: 'key_unused',
    subjectId: c.id,
    promptId: c.promptId,
    keyId: c.id,
    message,
    details: {
      keyType: c.keyType,
      keyName: c.name,
      prefix: c.prefix,
      createdAt: c.createdAt,
      lastUsedAt: c.lastUsedAt,
    },
    occurrenceId: c.episode,
    at: now,
  };
}

/**
 * One run of the key_unused check, in two statements: the first resolves open key_unused warnings
 * whose key is used again, revoked or gone, and returns the unused keys that have no warning for
 * their current idle stretch yet; the second raises those (one multi-row upsert).
 */
export async function checkUnusedKeys(db: Db, now = new Date()): Promise<{ raised: number; resolved: number }> {
  const at = now.toISOString();
  const rows = rowsOf<Candidate>(
    await db.execute(sql`
      with unused as materialized (
        select 'retrieval' as key_type, k.id, k.organization_id, k.prompt_id, k.name, k.prefix, k.created_at, k.last_used_at
        from retrieval_keys k
        where k.revoked_at is null
          and ((k.last_used_at is null and k.created_at <= ${at}::timestamptz - make_interval(days => ${neverUsedDays}))
            or k.last_used_at <= ${at}::timestamptz - make_interval(days => ${idleDays}))
        union all
        select 'ingestion', k.id, k.organization_id, null, k.name, k.prefix, k.created_at, k.last_used_at
        from ingestion_keys k
        where k.revoked_at is null
          and ((k.last_used_at is null and k.created_at <= ${at}::timestamptz - make_interval(days => ${neverUsedDays}))
            or k.last_used_at <= ${at}::timestamptz - make_interval(days => ${idleDays}))
      ),
      episodes as (
        select u.*, case when u.last_used_at is null then 'never'
          else 'idle-since:' || (extract(epoch from u.last_used_at) * 1000)::bigint end as episode
        from unused u
      ),
      resolved as (
        update warnings set resolved_at = ${at}::timestamptz
        where id in (
          select w.id from warnings w
          where w.kind = 'key_unused' and w.resolved_at is null
            and not exists (select 1 from unused u where u.id = w.subject_id and u.organization_id = w.organization_id)
          limit ${resolveLimit})
        returning id
      ),
      candidates as (
        select e.* from episodes e
        where not exists (
          select 1 from warnings w
          where w.organization_id = e.organization_id and w.kind = 'key_unused' and w.subject_id = e.id and w.last_occurrence_id = e.episode)
        order by e.id
        limit ${raiseLimit}
      )
      select c.key_type as "keyType", c.id, c.organization_id as "organizationId", c.prompt_id as "promptId", c.name, c.prefix,
        c.created_at as "createdAt", c.last_used_at as "lastUsedAt", c.episode, r.n::int as resolved
      from (select count(*) as n from resolved) r left join candidates c on true`),
  );
  const toIso = (v: unknown) => (v == null ? null : new Date(v as string).toISOString());
  const candidates = rows
    .filter((r): r is Candidate & { id: string } => r.id !== null)
    .map((r) => ({ ...r, createdAt: toIso(r.createdAt)!, lastUsedAt: toIso(r.lastUsedAt) }));
  if (candidates.length > 0)
    await raiseWarnings(
      db,
      candidates.map((c) => warningFor(c, now)),
    );
  return { raised: candidates.length, resolved: Number(rows[0]?.resolved ?? 0) };
}

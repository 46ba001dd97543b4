import { sql } from 'drizzle-orm';
import { rowsOf } from '@/db/client';
import type { ServiceContext } from '../context';
import { authorize } from '../access/permissions';
import { flushBeforeRead } from '../retrieval/activity';
import type { GettingStarted } from './schemas';

// The overview's "Get started" progress (the type and its rules: GettingStarted in ./schemas).
export async function gettingStarted(ctx: ServiceContext, organizationId: string): Promise<GettingStarted> {
  await authorize(ctx, organizationId, 'organization.read');
  await flushBeforeRead('getting-started'); // lastUsedAt of this process's retrievals
  const [row] = rowsOf<GettingStarted>(
    await ctx.db.execute(sql`
      select
        exists (select 1 from prompts where organization_id = ${organizationId}) as "hasPrompt",
        exists (
          select 1 from prompts p join prompt_labels l on l.prompt_id = p.id and l.label = 'production'
          where p.organization_id = ${organizationId}
        ) as "hasPublished",
        exists (
          select 1 from retrieval_keys where organization_id = ${organizationId} and revoked_at is null
        ) as "hasRetrievalKey",
        exists (
          select 1 from retrieval_keys where organization_id = ${organizationId} and last_used_at is not null
        ) as "hasRetrieved",
        exists (select 1 from traces where organization_id = ${organizationId}) as "hasTraces",
        (select count(*) from (
          select 1 from memberships where organization_id = ${organizationId} limit 2
        ) m) > 1 as "hasTeammate",
        (select id from prompts where organization_id = ${organizationId} and state = 'setup'
          order by created_at, id limit 1) as "setupPromptId",
        (select id from prompts where organization_id = ${organizationId} and state = 'active'
          order by created_at, id limit 1) as "activePromptId"
    `),
  );
  return row;
}

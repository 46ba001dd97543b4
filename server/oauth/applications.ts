import { and, desc, eq, inArray, isNull, max } from 'drizzle-orm';
import { oauthConsents, oauthGrants } from '@/db/schema';
import { recordAudit } from '../audit/service';
import type { ServiceContext } from '../context';
import { notFound } from '../errors';
import { findClient } from './clients';
import { revokeClientForUser } from './grants';
import type { AuthorizedApplication } from './schemas';

// The person's authorized applications (Account → Authorized applications): one row per client
// they consented to, with when and the last time any of its tokens was used.
export async function listAuthorizedApplications(ctx: ServiceContext): Promise<{ items: AuthorizedApplication[] }> {
  const consents = await ctx.db
    .select()
    .from(oauthConsents)
    .where(eq(oauthConsents.userId, ctx.actor.userId))
    .orderBy(desc(oauthConsents.createdAt))
    .limit(100);
  if (consents.length === 0) return { items: [] };
  const usage = await ctx.db
    .select({ clientId: oauthGrants.clientId, lastUsedAt: max(oauthGrants.lastUsedAt) })
    .from(oauthGrants)
    .where(
      and(
        eq(oauthGrants.userId, ctx.actor.userId),
        isNull(oauthGrants.revokedAt),
        inArray(
          oauthGrants.clientId,
          consents.map((c) => c.clientId),
        ),
      ),
    )
    .groupBy(oauthGrants.clientId);
  const lastUsed = new Map(usage.map((u) => [u.clientId, u.lastUsedAt]));
  const items: AuthorizedApplication[] = [];
  for (const consent of consents) {
    const client = await findClient(ctx.db, consent.clientId);
    const used = lastUsed.get(consent.clientId) ?? consent.lastUsedAt;
    items.push({
      clientId: consent.clientId,
      name: client?.name ?? consent.clientId,
      scopes: consent.scope.split(' '),
      authorizedAt: consent.createdAt.toISOString(),
      lastUsedAt: used ? new Date(used).toISOString() : null,
    });
  }
  return { items };
}

// Revokes the consent and every refresh and access token the client holds for this person.
export async function revokeAuthorizedApplication(ctx: ServiceContext, clientId: string): Promise<{ revoked: true }> {
  const [consent] = await ctx.db
    .select({ clientId: oauthConsents.clientId })
    .from(oauthConsents)
    .where(and(eq(oauthConsents.userId, ctx.actor.userId), eq(oauthConsents.clientId, clientId)));
  const grants = await revokeClientForUser(ctx.db, ctx.actor.userId, clientId);
  if (!consent && grants === 0) throw notFound('Authorized application');
  await recordAudit(ctx, {
    organizationId: null,
    operation: 'oauth.revokeApplication',
    targetType: 'oauth_client',
    targetId: clientId,
    details: { grantsRevoked: grants },
  });
  return { revoked: true as const };
}

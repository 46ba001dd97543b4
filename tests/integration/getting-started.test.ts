import { describe, expect, it } from 'vitest';
import { newOrganization, newUser } from '../helpers/api';
import { batch, newIngestionKey, span } from '../helpers/ingestion';
import { activePrompt, createPrompt } from '../helpers/prompts';
import { newRetrievalKey, retrieve } from '../helpers/retrieval';
import { call } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';

// The overview's "Get started" progress (organizations.gettingStarted, dashboard only): every flag
// is read from what the organization has, members only.

const nothing = {
  hasPrompt: false,
  hasPublished: false,
  hasRetrievalKey: false,
  hasRetrieved: false,
  hasTraces: false,
  hasTeammate: false,
  setupPromptId: null,
  activePromptId: null,
};

describe('getting started progress', () => {
  it('follows an organization from nothing to every step done, and counts no other organization', async () => {
    const owner = await newUser();
    const org = await newOrganization(owner);
    const other = await newOrganization(owner);
    const progress = async () => (await caller(owner.id)).organizations.gettingStarted({ organizationId: org.id });
    expect(await progress()).toEqual(nothing);

    // Another organization's prompt, key, retrieval and trace count for it alone.
    const elsewhere = await activePrompt(owner, other.id);
    const otherKey = await newRetrievalKey(owner.call, elsewhere.base);
    expect((await retrieve(elsewhere.prompt.id, otherKey.secret)).status).toBe(200);
    expect(await progress()).toEqual(nothing);

    const draft = await createPrompt(owner, org.id, 'Draft only');
    expect(await progress()).toEqual({ ...nothing, hasPrompt: true, setupPromptId: draft.id });

    const active = await activePrompt(owner, org.id);
    const published = { ...nothing, hasPrompt: true, hasPublished: true, setupPromptId: draft.id };
    expect(await progress()).toEqual({ ...published, activePromptId: active.prompt.id });

    const key = await newRetrievalKey(owner.call, active.base);
    const keyed = { ...published, activePromptId: active.prompt.id, hasRetrievalKey: true };
    expect(await progress()).toEqual(keyed);
    expect((await retrieve(active.prompt.id, key.secret)).status).toBe(200);
    expect(await progress()).toEqual({ ...keyed, hasRetrieved: true });

    // A revoked key that was used still counts as the step done; no live key is no key.
    expect((await owner.call('DELETE', `${active.base}/keys/${key.keyId}`)).status).toBe(200);
    expect(await progress()).toEqual({ ...keyed, hasRetrievalKey: false, hasRetrieved: true });

    const ingestion = await newIngestionKey(org.id);
    const sent = await call('POST', '/traces', {
      body: batch(span()),
      headers: { authorization: `Bearer ${ingestion.secret}` },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const teammate = await newUser();
    const added = await owner.call('POST', `/organizations/${org.id}/members`, {
      body: { email: teammate.email, role: 'viewer' },
    });
    expect(added.status).toBe(201);
    const everything = { ...keyed, hasRetrievalKey: false, hasRetrieved: true, hasTraces: true, hasTeammate: true };
    expect(await progress()).toEqual(everything);
    // A viewer reads the same progress.
    expect(await (await caller(teammate.id)).organizations.gettingStarted({ organizationId: org.id })).toEqual(
      everything,
    );
  });

  it('is refused to non-members as a missing organization, and to the signed out', async () => {
    const owner = await newUser();
    const org = await newOrganization(owner);
    const stranger = await newUser();
    const refused = await rejection(
      (await caller(stranger.id)).organizations.gettingStarted({ organizationId: org.id }),
    );
    expect(refused.cause.code).toBe('not_found');
    const signedOut = await rejection((await caller(null)).organizations.gettingStarted({ organizationId: org.id }));
    expect(signedOut.code).toBe('UNAUTHORIZED');
  });
});

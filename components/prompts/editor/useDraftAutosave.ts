'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { useTRPC, useTRPCClient } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import type { Draft, DraftContent } from '../types';
import { validateContent } from './validate';

const autosaveDelayMs = 800;

export type SaveStatus = 'saved' | 'dirty' | 'saving' | 'conflict' | 'invalid' | 'error';
export type DraftConflict = { mine: DraftContent; theirs: Draft };

// `pendingIssues`: problems of edits that have not reached the content yet (a parameters text that
// does not parse); like the content's own issues, they keep the draft from being sent.
type Scope = {
  organizationId: string;
  promptId: string;
  enabled: boolean;
  pendingIssues?: RefObject<Record<string, string>>;
};

// The personal draft with debounced compare-and-swap saves. One save is in flight at a time; edits
// made meanwhile are saved right after it with the new revision. A stale revision never overwrites:
// it opens a conflict that only an explicit choice (keep mine / use theirs) resolves.
export function useDraftAutosave({ organizationId, promptId, enabled, pendingIssues }: Scope) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const draftOptions = useMemo(
    () => trpc.prompts.getDraft.queryOptions({ organizationId, promptId }, { staleTime: Infinity }),
    [trpc, organizationId, promptId],
  );
  const draftQuery = useQuery(draftOptions);

  const [content, setContent] = useState<DraftContent | null>(null);
  const [revision, setRevision] = useState(0);
  const [status, setStatus] = useState<SaveStatus>('saved');
  const [issues, setIssues] = useState<Record<string, string>>({});
  const [errorMessage, setErrorMessage] = useState<string | null>(null);
  const [conflict, setConflict] = useState<DraftConflict | null>(null);
  const [busy, setBusy] = useState(false);

  const contentRef = useRef<DraftContent | null>(null);
  const revisionRef = useRef(0);
  const editCount = useRef(0);
  const saving = useRef(false);
  const inConflict = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  // Take a stored draft as the editor's content and revision (refs and state alike).
  const adopt = useCallback((draft: Draft) => {
    contentRef.current = draft.content;
    revisionRef.current = draft.revision;
    setContent(draft.content);
    setRevision(draft.revision);
  }, []);

  const apply = useCallback(
    (draft: Draft) => {
      adopt(draft);
      queryClient.setQueryData(draftOptions.queryKey, draft);
    },
    [adopt, queryClient, draftOptions.queryKey],
  );

  // First load only: later refetches never replace what the user is typing.
  const loaded = draftQuery.data;
  useEffect(() => {
    if (loaded && contentRef.current === null) adopt(loaded);
  }, [loaded, adopt]);

  const openConflict = useCallback(async () => {
    inConflict.current = true;
    setStatus('conflict');
    const theirs = await queryClient.fetchQuery({ ...draftOptions, staleTime: 0 });
    setConflict({ mine: contentRef.current!, theirs });
  }, [queryClient, draftOptions]);

  const flush = useCallback(async () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (saving.current || inConflict.current || !contentRef.current) return;
    const local = { ...validateContent(contentRef.current), ...pendingIssues?.current };
    if (Object.keys(local).length > 0) {
      // Not sent: the server would refuse it anyway. The fields show why; the next edit retries.
      setIssues({});
      setErrorMessage('Fix the highlighted fields to save.');
      setStatus('invalid');
      return;
    }
    const sentEdit = editCount.current;
    saving.current = true;
    setStatus('saving');
    try {
      const draft = await client.prompts.updateDraft.mutate({
        organizationId,
        promptId,
        content: contentRef.current,
        revision: revisionRef.current,
      });
      revisionRef.current = draft.revision;
      setRevision(draft.revision);
      queryClient.setQueryData(draftOptions.queryKey, draft);
      setIssues({});
      setErrorMessage(null);
      if (editCount.current === sentEdit) {
        // Nothing typed meanwhile: take the stored content (defaults such as modelId filled in).
        contentRef.current = draft.content;
        setContent(draft.content);
        setStatus('saved');
      } else {
        setStatus('dirty');
        timer.current = setTimeout(() => void flush(), 0);
      }
    } catch (error) {
      const info = readAppError(error);
      if (info?.code === 'draft_conflict') {
        await openConflict();
      } else if (info?.code === 'invalid_request' && Object.keys(info.fields).length > 0) {
        setIssues(info.fields);
        setErrorMessage(info.message);
        setStatus('invalid');
      } else {
        setErrorMessage(info?.message ?? 'The draft could not be saved.');
        setStatus('error');
      }
    } finally {
      saving.current = false;
    }
  }, [client, organizationId, promptId, queryClient, draftOptions.queryKey, openConflict, pendingIssues]);

  // Saves whatever is pending when the editor goes away (another tab of the prompt, another page).
  const flushRef = useRef(flush);
  flushRef.current = flush;
  useEffect(
    () => () => {
      if (timer.current) void flushRef.current();
    },
    [],
  );

  const edit = useCallback(
    (update: (current: DraftContent) => DraftContent) => {
      if (!enabled || !contentRef.current) return;
      const next = update(contentRef.current);
      contentRef.current = next;
      editCount.current += 1;
      setContent(next);
      if (inConflict.current) return;
      setStatus(saving.current ? 'saving' : 'dirty');
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(() => void flush(), autosaveDelayMs);
    },
    [enabled, flush],
  );

  // Keep mine: an explicit overwrite of the stored revision the user has just seen.
  const keepMine = useCallback(() => {
    if (!conflict) return;
    revisionRef.current = conflict.theirs.revision;
    inConflict.current = false;
    setConflict(null);
    void flush();
  }, [conflict, flush]);

  const takeTheirs = useCallback(() => {
    if (!conflict) return;
    inConflict.current = false;
    setConflict(null);
    apply(conflict.theirs);
    setIssues({});
    setStatus('saved');
  }, [conflict, apply]);

  const discard = useCallback(async () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    setBusy(true);
    try {
      const draft = await client.prompts.discardDraft.mutate({
        organizationId,
        promptId,
        revision: revisionRef.current,
      });
      editCount.current += 1;
      apply(draft);
      setIssues({});
      setErrorMessage(null);
      setStatus('saved');
      return null;
    } catch (error) {
      const info = readAppError(error);
      if (info?.code === 'draft_conflict') {
        await openConflict();
        return null;
      }
      return info?.message ?? 'The draft could not be discarded.';
    } finally {
      setBusy(false);
    }
  }, [client, organizationId, promptId, apply, openConflict]);

  return {
    draftQuery,
    content,
    revision,
    status,
    issues,
    errorMessage,
    conflict,
    busy,
    edit,
    flush,
    keepMine,
    takeTheirs,
    discard,
    // The stored draft moved on elsewhere (a save refused as stale): the same choice as a refused write.
    resolveStale: openConflict,
  };
}

import type { Db } from '@/db/client';
import { preparedRows } from '@/db/prepared';
import { config } from '../config';
import { log } from '../log';
import { databaseError, slimRows, textSlots, type TextRow } from './ingest-call';

// Group commit for ingestion, shared by native batches (server/traces/ingest.ts) and OTLP exports
// (server/otlp/store.ts). Each request is parsed, validated and resolved on its own first (its 400 or
// 409 from the request alone stays its own); what reaches this stage is one database call ready to
// go. While the process has a group in flight on each of its database connections, new calls wait;
// then the waiting calls go together as one call of ingest_groups (db/functions/ingest_groups.sql): one statement, one transaction, one
// commit for all of them, and every request is answered only after that commit.
// - Order: a group holds only calls touching distinct traces and spans (of their organization), so
//   storing them together is storing them one after the other in any order. A call that shares a
//   trace or span with an earlier call of the group, with a group in flight, or with a call already
//   left waiting, waits for a later group: calls of one trace keep their arrival order.
// - Failure: if the group's statement fails for any reason (one request's key revoked, its
//   organization read-only, a span conflict, anything else), nothing of it is stored and every call
//   of the group is stored again on its own, in arrival order, so each gets exactly the answer it
//   would have had alone and no request fails because of a neighbour.
// - Cap: a group holds at most maxGroupSlots texts and maxGroupTextChars characters of them; a call
//   larger than that on its own is stored alone at once.
// docs/decisions.md "P2 group commit ingestion".

export type GroupCall<T> = {
  keyId: string;
  organizationId: string;
  otlp: boolean;
  /** One row per stored span, as the function takes it; row.i is its text slot, 0 … slots - 1. */
  rows: TextRow[];
  slots: number;
  /** The answer when the call was stored as part of a group. */
  grouped: T;
  /** The call on its own, with its own answer (the path a request took before group commit). */
  storeAlone: () => Promise<T>;
};

type Waiter = {
  call: GroupCall<unknown>;
  footprint: string[];
  chars: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

// Up to 1,024 slots: 2,048 text parameters (statements prepared per power of two, at most 5), about
// twenty 50-event batches. 16 MiB of texts bounds what one statement sends.
const maxGroupSlots = 1024;
const maxGroupTextChars = 16 * 1024 * 1024;
// As many groups in flight as the process has database connections (INGEST_DB_CONNECTIONS): the
// calls waiting behind them are what the next group is made of.
const maxGroupsInFlight = () => config().ingestDbConnections;

// What a call touches, as keys of its organization: its traces (a span is named by its trace and
// span ids, so distinct traces mean distinct spans).
function footprintOf(call: GroupCall<unknown>): string[] {
  const keys = new Set<string>();
  for (const row of call.rows) keys.add(`${call.organizationId}/${row.traceId}`);
  return [...keys];
}

function textChars(rows: TextRow[]): number {
  let chars = 0;
  for (const row of rows) chars += (row.contentJson?.length ?? 0) + (row.metadataJson?.length ?? 0);
  return chars;
}

class GroupCommit {
  private waiting: Waiter[] = [];
  // Footprints of the groups in flight: a call touching one waits for a later group.
  private inFlight = new Set<string>();
  private groupsInFlight = 0;

  constructor(private readonly db: Db) {}

  submit<T>(call: GroupCall<T>): Promise<T> {
    const chars = textChars(call.rows);
    if (call.slots > maxGroupSlots || chars > maxGroupTextChars) return call.storeAlone();
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        call,
        footprint: footprintOf(call),
        chars,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.groupsInFlight < maxGroupsInFlight() && this.waiting.length > 0) {
      const group = this.takeGroup();
      if (group.length === 0) return; // every waiting call touches a group in flight
      this.groupsInFlight++;
      for (const waiter of group) for (const key of waiter.footprint) this.inFlight.add(key);
      void this.store(group).finally(() => {
        for (const waiter of group) for (const key of waiter.footprint) this.inFlight.delete(key);
        this.groupsInFlight--;
        this.dispatch();
      });
    }
  }

  // The waiting calls, in arrival order, that can go together; the others keep their places.
  private takeGroup(): Waiter[] {
    const claimed = new Set(this.inFlight);
    const group: Waiter[] = [];
    const left: Waiter[] = [];
    let slots = 0;
    let chars = 0;
    for (const waiter of this.waiting) {
      const full = slots + waiter.call.slots > maxGroupSlots || chars + waiter.chars > maxGroupTextChars;
      // A call touching what an earlier call claimed waits, and claims its own footprint too, so a
      // later call of the same trace cannot overtake it.
      if (full || waiter.footprint.some((key) => claimed.has(key))) left.push(waiter);
      else {
        group.push(waiter);
        slots += waiter.call.slots;
        chars += waiter.chars;
      }
      for (const key of waiter.footprint) claimed.add(key);
    }
    this.waiting = left;
    return group;
  }

  private async store(group: Waiter[]): Promise<void> {
    if (group.length > 1) {
      try {
        await callIngestGroups(
          this.db,
          group.map((waiter) => waiter.call),
        );
        for (const waiter of group) waiter.resolve(waiter.call.grouped);
        return;
      } catch (error) {
        // Stored nothing: each call again on its own, below, gets its own answer. A refusal the
        // functions raise (PT…) is one request's answer; anything else is worth a line in the log.
        if (!databaseError(error).code)
          log.warn({ err: error }, 'group commit failed; storing its requests one by one');
      }
    }
    for (const waiter of group) await waiter.call.storeAlone().then(waiter.resolve, waiter.reject);
  }
}

// One function call per key and kind: the group's calls of one key touch distinct traces and spans,
// so one call over their union stores what they would one after the other.
type MergedCall = { keyId: string; otlp: boolean; rows: TextRow[]; slots: number; traces: Set<string> };

function mergeByKey(calls: GroupCall<unknown>[]): MergedCall[] {
  const merged = new Map<string, MergedCall>();
  for (const call of calls) {
    const id = `${call.otlp ? 'otlp' : 'native'} ${call.keyId}`;
    let into = merged.get(id);
    if (!into) {
      into = { keyId: call.keyId, otlp: call.otlp, rows: [], slots: 0, traces: new Set() };
      merged.set(id, into);
    }
    for (const row of call.rows) {
      into.rows.push({ ...row, i: into.slots + row.i });
      into.traces.add(`${call.organizationId}/${row.traceId}`);
    }
    into.slots += call.slots;
  }
  return [...merged.values()];
}

// One prepared statement per power of two of slots (at least 64), as for OTLP ingestion. The
// arrays of the group travel as array literals in text parameters (the drivers' own array
// parameters do not type arrays of a prepared statement alike).
const preparedCalls = new Map<number, string>();
function preparedCall(slotCount: number): string {
  let text = preparedCalls.get(slotCount);
  if (!text) {
    text =
      `select ingest_groups($1::text::text[], $2::text::boolean[], $3::text::text[], $4::text::integer[], ` +
      `$5::text::integer[], $6::text::text[], ARRAY[${textSlots(7, slotCount)}]::text[], ` +
      `ARRAY[${textSlots(7 + slotCount, slotCount)}]::text[])`;
    preparedCalls.set(slotCount, text);
  }
  return text;
}

// A Postgres array literal: every element quoted, its quotes and backslashes escaped.
const arrayLiteral = (items: (string | number | boolean)[]) =>
  `{${items.map((item) => (typeof item === 'string' ? `"${item.replace(/[\\"]/g, '\\$&')}"` : String(item))).join(',')}}`;

async function callIngestGroups(db: Db, calls: GroupCall<unknown>[]): Promise<void> {
  const merged = mergeByKey(calls);
  const total = merged.reduce((sum, call) => sum + call.slots, 0);
  const slotCount = Math.max(64, 2 ** Math.ceil(Math.log2(total)));
  const content: (string | null)[] = new Array(slotCount).fill(null);
  const metadata: (string | null)[] = new Array(slotCount).fill(null);
  const spans: string[] = [];
  const from: number[] = [];
  const locks: string[] = [];
  let offset = 0;
  for (const call of merged) {
    spans.push(slimRows(call.rows, offset, content, metadata));
    from.push(offset);
    if (merged.length > 1) locks.push(...call.traces);
    offset += call.slots;
  }
  const parameters = [
    merged.map((call) => call.keyId),
    merged.map((call) => call.otlp),
    spans,
    from,
    merged.map((call) => call.slots),
    locks,
  ].map(arrayLiteral);
  await preparedRows(db, preparedCall(slotCount), (parameters as (string | null)[]).concat(content, metadata));
}

const groups = new WeakMap<Db, GroupCommit>();

/** Stores the call with the calls that wait beside it; resolves with its answer once committed. */
export function commitInGroup<T>(db: Db, call: GroupCall<T>): Promise<T> {
  let group = groups.get(db);
  if (!group) {
    group = new GroupCommit(db);
    groups.set(db, group);
  }
  return group.submit(call);
}

// The exporter's queue (see exporter.ts): serialized span snapshots in export order, numbered, and
// cut into batches of JSON bodies.

type Queued = { seq: number; json: string; bytes: number; at: number };
export type Batch = { first: number; last: number; count: number; body: string; bytes: number };

const batchPrefix = '{"version":1,"events":[';
const batchSuffix = ']}';
/** The bytes a batch body adds around its events. */
export const batchEnvelopeBytes = batchPrefix.length + batchSuffix.length;

/** UTF-8 length of a string without allocating (what the server counts against 1 MiB). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export class SpanQueue {
  private queue: Queued[] = [];
  private head = 0;
  private queuedBytes = 0;
  private nextSeq = 1;

  /** Snapshots queued. */
  get length(): number {
    return this.queue.length - this.head;
  }

  /** Bytes of JSON queued. */
  get bytes(): number {
    return this.queuedBytes;
  }

  /** The sequence number of the last snapshot pushed (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** When the oldest queued snapshot was pushed; call only when the queue is not empty. */
  oldestAt(): number {
    return this.queue[this.head].at;
  }

  /** The sequence number of the oldest queued snapshot, or the next one when the queue is empty. */
  firstSeq(): number {
    return this.length > 0 ? this.queue[this.head].seq : this.nextSeq;
  }

  push(json: string, bytes: number): void {
    this.queue.push({ seq: this.nextSeq++, json, bytes, at: Date.now() });
    this.queuedBytes += bytes;
  }

  dropOldest(): void {
    const dropped = this.queue[this.head];
    this.queue[this.head++] = undefined as unknown as Queued;
    this.queuedBytes -= dropped.bytes;
    this.compact();
  }

  clear(): void {
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
  }

  /** Whether a batch of these bounds can be filled from the queue now. */
  holdsFullBatch(maxEvents: number, maxBytes: number): boolean {
    return this.length >= maxEvents || this.queuedBytes + this.length + batchEnvelopeBytes > maxBytes;
  }

  /** Whether a batch goes out now: `force`d (flush or shutdown), full, or its oldest snapshot waited flushIntervalMs. */
  holdsDueBatch(
    o: { maxBatchEvents: number; maxBatchBytes: number; flushIntervalMs: number },
    force: boolean,
  ): boolean {
    if (this.length === 0) return false;
    return (
      force ||
      this.holdsFullBatch(o.maxBatchEvents, o.maxBatchBytes) ||
      Date.now() - this.oldestAt() >= o.flushIntervalMs
    );
  }

  /** Takes the oldest snapshots that fit in one batch (at least one); call only when the queue is not empty. */
  takeBatch(maxEvents: number, maxBytes: number): Batch {
    const parts: string[] = [];
    let bytes = batchEnvelopeBytes;
    const first = this.queue[this.head].seq;
    let last = first;
    while (this.length > 0 && parts.length < maxEvents) {
      const next = this.queue[this.head];
      const added = next.bytes + (parts.length > 0 ? 1 : 0);
      if (parts.length > 0 && bytes + added > maxBytes) break;
      parts.push(next.json);
      bytes += added;
      last = next.seq;
      this.queue[this.head++] = undefined as unknown as Queued;
      this.queuedBytes -= next.bytes;
    }
    this.compact();
    return { first, last, count: parts.length, body: `${batchPrefix}${parts.join(',')}${batchSuffix}`, bytes };
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}

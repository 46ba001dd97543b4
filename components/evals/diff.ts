// Line and word diffs for outputs and prompt messages (longest common subsequence, no dependencies).

type DiffOp = { kind: 'same' | 'added' | 'removed'; text: string };

// Above this many token pairs the table would be too large: fall back to "all removed, all added".
const maxCells = 4_000_000;

function diffTokens(a: string[], b: string[]): DiffOp[] {
  // Trim the common head and tail first: most edits are local.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head: DiffOp[] = a.slice(0, start).map((text) => ({ kind: 'same', text }));
  const tail: DiffOp[] = a.slice(endA).map((text) => ({ kind: 'same', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle: DiffOp[] = [];
  if ((midA.length + 1) * (midB.length + 1) > maxCells) {
    for (const text of midA) middle.push({ kind: 'removed', text });
    for (const text of midB) middle.push({ kind: 'added', text });
    return [...head, ...middle, ...tail];
  }
  const n = midA.length;
  const m = midB.length;
  // lengths[i][j] = LCS length of midA[i:] and midB[j:]
  const lengths: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i][j] = midA[i] === midB[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: 'same', text: midA[i] });
      i += 1;
      j += 1;
    } else if (lengths[i + 1][j] >= lengths[i][j + 1]) {
      middle.push({ kind: 'removed', text: midA[i] });
      i += 1;
    } else {
      middle.push({ kind: 'added', text: midB[j] });
      j += 1;
    }
  }
  while (i < n) middle.push({ kind: 'removed', text: midA[i++] });
  while (j < m) middle.push({ kind: 'added', text: midB[j++] });
  return [...head, ...middle, ...tail];
}

function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/\r?\n/);
}

function diffLines(before: string, after: string): DiffOp[] {
  return diffTokens(splitLines(before), splitLines(after));
}

// Words and the whitespace between them, so joining the tokens gives the text back.
function diffWords(before: string, after: string): DiffOp[] {
  const tokenize = (text: string) => text.match(/\s+|[^\s]+/g) ?? [];
  return diffTokens(tokenize(before), tokenize(after));
}

export type DiffRow =
  | { kind: 'same'; text: string }
  | { kind: 'removed'; text: string; words?: DiffOp[] }
  | { kind: 'added'; text: string; words?: DiffOp[] };

// Line diff where a removed line directly followed by an added one also gets a word diff.
export function diffRows(before: string, after: string): DiffRow[] {
  const ops = diffLines(before, after);
  const rows: DiffRow[] = [];
  for (let k = 0; k < ops.length; k += 1) {
    const op = ops[k];
    if (op.kind !== 'removed') {
      rows.push(op);
      continue;
    }
    // Gather a block of removed lines and the added block right after it, then pair them up.
    const removed: string[] = [];
    while (k < ops.length && ops[k].kind === 'removed') removed.push(ops[k++].text);
    const added: string[] = [];
    while (k < ops.length && ops[k].kind === 'added') added.push(ops[k++].text);
    k -= 1;
    const paired = removed.length === added.length;
    removed.forEach((text, index) =>
      rows.push({
        kind: 'removed',
        text,
        words: paired ? diffWords(text, added[index]).filter((w) => w.kind !== 'added') : undefined,
      }),
    );
    added.forEach((text, index) =>
      rows.push({
        kind: 'added',
        text,
        words: paired ? diffWords(removed[index], text).filter((w) => w.kind !== 'removed') : undefined,
      }),
    );
  }
  return rows;
}

export type SplitCell = { kind: 'same' | 'removed' | 'added'; text: string; words?: DiffOp[] } | null;
export type SplitRow = { left: SplitCell; right: SplitCell };

// Side-by-side rows: unchanged lines on both sides, a replaced block paired line by line.
export function splitRows(before: string, after: string): SplitRow[] {
  const rows = diffRows(before, after);
  const out: SplitRow[] = [];
  for (let k = 0; k < rows.length; k += 1) {
    const row = rows[k];
    if (row.kind === 'same') {
      out.push({ left: row, right: row });
      continue;
    }
    const removed: DiffRow[] = [];
    while (k < rows.length && rows[k].kind === 'removed') removed.push(rows[k++]);
    const added: DiffRow[] = [];
    while (k < rows.length && rows[k].kind === 'added') added.push(rows[k++]);
    k -= 1;
    for (let i = 0; i < Math.max(removed.length, added.length); i += 1)
      out.push({ left: removed[i] ?? null, right: added[i] ?? null });
  }
  return out;
}

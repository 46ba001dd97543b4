// Readable output for people (tables and key/value summaries); --json prints the API's JSON instead.

type Json = unknown;
const isRecord = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Objects a table can still show in one cell: a traffic split (`90% v2 / 10% v3`) and an override
// (its reason).
function compact(value: Json): string | null {
  if (Array.isArray(value) && value.length && value.every((v) => isRecord(v) && typeof v.weight === 'number'))
    return (value as Record<string, Json>[])
      .map((v) => `${String(v.weight)}% ${typeof v.version === 'number' ? `v${v.version}` : String(v.versionId)}`)
      .join(' / ');
  if (isRecord(value) && typeof value.reason === 'string') return `override: ${value.reason}`;
  // A case's source (from a span): which span.
  if (isRecord(value) && typeof value.spanId === 'string' && typeof value.traceId === 'string')
    return `span ${value.spanId}`;
  return null;
}

function cell(value: Json, max = 48): string {
  let text: string;
  const shown = compact(value);
  if (shown !== null) text = shown;
  else if (value === null || value === undefined) text = '—';
  else if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) text = value.join(', ');
  else if (Array.isArray(value)) text = `[${value.length} ${value.length === 1 ? 'item' : 'items'}]`;
  else text = JSON.stringify(value);
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// Columns worth showing first when a list has them; others follow up to a width budget.
const preferred = [
  'id',
  'userId',
  'label',
  'name',
  'email',
  'number',
  'version',
  'toVersion',
  'toSplit',
  'clientId',
  'evaluationId',
  'state',
  'status',
  'revokedAt',
  'role',
  'plan',
  'scope',
  'passRate',
  'kind',
  'prefix',
  'at',
  'createdAt',
  'lastUsedAt',
  'override',
];

function table(items: Record<string, Json>[]): string {
  if (!items.length) return '(none)';
  const keys = [...new Set(items.flatMap((item) => Object.keys(item)))].filter((key) =>
    items.every(
      (item) =>
        item[key] === null ||
        item[key] === undefined ||
        typeof item[key] !== 'object' ||
        compact(item[key]) !== null ||
        (Array.isArray(item[key]) && (item[key] as Json[]).every((v) => typeof v !== 'object')),
    ),
  );
  keys.sort((a, b) => (preferred.indexOf(a) + 1 || 99) - (preferred.indexOf(b) + 1 || 99));
  const chosen: string[] = [];
  let width = 0;
  for (const key of keys) {
    const w = Math.max(key.length, ...items.map((item) => cell(item[key]).length));
    if (chosen.length >= 2 && width + w > 140) continue;
    chosen.push(key);
    width += w + 2;
  }
  const widths = chosen.map((key) => Math.max(key.length, ...items.map((item) => cell(item[key]).length)));
  const line = (values: string[]) =>
    values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  return [line(chosen), ...items.map((item) => line(chosen.map((key) => cell(item[key]))))].join('\n');
}

// Links (a checkout page, a deletion link) are printed whole: a shortened one cannot be opened.
const isLink = (value: Json): boolean => typeof value === 'string' && /^https?:\/\/\S+$/.test(value);

function summary(value: Record<string, Json>, indent = ''): string {
  const keys = Object.keys(value);
  const width = Math.max(0, ...keys.map((k) => k.length));
  const lines: string[] = [];
  for (const key of keys) {
    const v = value[key];
    if (isRecord(v) && indent.length < 4) {
      lines.push(`${indent}${key}:`);
      lines.push(summary(v, `${indent}  `));
    } else if (Array.isArray(v) && v.length && v.every(isRecord) && indent.length < 4) {
      lines.push(`${indent}${key}:`);
      lines.push(
        table(v as Record<string, Json>[])
          .split('\n')
          .map((l) => `${indent}  ${l}`)
          .join('\n'),
      );
    } else lines.push(`${indent}${key.padEnd(width)}  ${cell(v, isLink(v) ? Infinity : 100)}`);
  }
  return lines.join('\n');
}

/** An evaluation result as the CLI reads it (GET …/evals/{eval}/results). */
export type CaseResult = {
  caseId: string;
  position: number;
  side: 'candidate' | 'production';
  status: string;
  passed: boolean | null;
  input: string;
  output: string | null;
  expectedOutput: string;
  error: string | null;
};

const isCaseResult = (item: Record<string, Json>): boolean =>
  typeof item.caseId === 'string' &&
  typeof item.side === 'string' &&
  typeof item.status === 'string' &&
  typeof item.expectedOutput === 'string' &&
  'output' in item;

const textLimit = 200;

// One line of a long text: whitespace collapsed, cut at `max` characters with how much was left out.
function clip(text: string | null, max = textLimit): { text: string; cut: boolean } {
  if (text === null) return { text: '—', cut: false };
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return { text: line === '' ? '(empty)' : line, cut: false };
  return { text: `${line.slice(0, max)}… (+${line.length - max} characters)`, cut: true };
}

/** Results that did not pass: errors (the case could not be executed) and scored cases that failed. */
export const notPassed = (results: CaseResult[]): CaseResult[] =>
  results.filter((r) => r.status === 'error' || (r.status === 'scored' && r.passed === false));

/**
 * Each failed or errored case with its reason, and the output beside the expected one, long texts
 * cut (the note says where the full text is). `label` adds a tag to a case (e.g. a regression).
 */
export function caseDetails(
  results: CaseResult[],
  options: { limit?: number; fullText?: string; label?: (r: CaseResult) => string | null } = {},
): string {
  const limit = options.limit ?? 20;
  const lines: string[] = [];
  let cut = false;
  for (const r of results.slice(0, limit)) {
    const why =
      r.status === 'error'
        ? `error: ${r.error ?? 'no reason recorded'}`
        : 'failed: the output does not match the expected output';
    const tag = options.label?.(r);
    lines.push(`  case ${r.position} (${r.side})${tag ? ` · ${tag}` : ''} · ${why}`);
    for (const [name, value] of [
      ['input', r.input],
      ['expected', r.expectedOutput],
      ['output', r.output],
    ] as const) {
      const shown = clip(value);
      cut ||= shown.cut;
      lines.push(`    ${`${name}:`.padEnd(10)}${shown.text}`);
    }
  }
  if (results.length > limit) lines.push(`  … and ${results.length - limit} more.`);
  if (cut || results.length > limit)
    lines.push(
      `  Long texts are cut at ${textLimit} characters; ${options.fullText ?? '--json prints every result in full'}.`,
    );
  return lines.join('\n');
}

/** What a command prints on success: JSON with --json, else a table for lists and a summary otherwise. */
export function render(body: Json, json: boolean): string {
  if (json) return JSON.stringify(body ?? null, null, 2);
  if (body === null || body === undefined || body === '') return 'Done.';
  if (isRecord(body) && Array.isArray(body.items) && body.items.every(isRecord)) {
    const rest = Object.entries(body).filter(([key]) => key !== 'items' && key !== 'nextCursor');
    const parts = [table(body.items as Record<string, Json>[])];
    // Evaluation results: every case that did not pass, with its reason and its output beside the expected one.
    const results = body.items.every(isCaseResult) ? notPassed(body.items as unknown as CaseResult[]) : [];
    if (results.length)
      parts.push(`Cases that did not pass (${results.length}):\n${caseDetails(results, { limit: Infinity })}`);
    if (rest.length) parts.push(summary(Object.fromEntries(rest)));
    if (typeof body.nextCursor === 'string') parts.push(`More: add --cursor ${body.nextCursor}`);
    return parts.join('\n\n');
  }
  if (isRecord(body)) return summary(body);
  return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
}

const percentOf = (value: Json): string | null =>
  typeof value === 'number' ? `${Math.round(value * 1000) / 10}%` : null;

// Problems listed per row (an import's `rowErrors`: `{ row, field, message }`), the first 20 of
// them and how many more (`--json` prints them all).
function rowProblems(details: Record<string, Json>): string[] {
  const rows = Array.isArray(details.rowErrors) ? details.rowErrors.filter(isRecord) : [];
  const shown = rows.slice(0, 20).map((problem) => {
    const where = [
      typeof problem.row === 'number' ? `row ${problem.row}` : null,
      typeof problem.field === 'string' ? problem.field : null,
    ].filter(Boolean);
    return `  - ${where.length ? `${where.join(', ')}: ` : ''}${String(problem.message ?? '')}`;
  });
  if (rows.length > shown.length) shown.push(`  … and ${rows.length - shown.length} more (--json lists them all)`);
  return shown;
}

/**
 * The first line of an API error on stderr: `code: message (request id)`, then each of its
 * `details.issues` (`  - path: message`). A refused promotion
 * (409 promotion_blocked) lists each reason on its own line instead of the message (which joins
 * them), then the pass rates and the ids of the regressed cases from `details`.
 */
export function apiErrorText(error: {
  code: string;
  message: string;
  details?: Record<string, Json>;
  requestId?: string;
}): string {
  const request = error.requestId ? ` (request ${error.requestId})` : '';
  const details = error.details ?? {};
  const reasons = Array.isArray(details.reasons) ? details.reasons.filter((r) => typeof r === 'string') : [];
  if (error.code !== 'promotion_blocked' || !reasons.length) {
    // Which field is wrong: each issue of a validation error on its own line (a request wrong as a
    // whole has one issue at the path '' that repeats the message: not shown twice).
    const issues = (Array.isArray(details.issues) ? details.issues : [])
      .filter(isRecord)
      .filter((issue) => typeof issue.message === 'string' && !(issue.path === '' && issue.message === error.message))
      .map((issue) => `  - ${issue.path ? `${String(issue.path)}: ` : ''}${String(issue.message)}`);
    // The plain facts of `details` (a draft's currentRevision, a state, the role needed), one per line:
    // without them a refusal says what happened but not what to retry with.
    const facts = Object.entries(details)
      .filter(
        ([key, value]) =>
          key !== 'issues' &&
          (['string', 'number', 'boolean'].includes(typeof value) ||
            (Array.isArray(value) && value.length > 0 && value.every((v) => !isRecord(v) && !Array.isArray(v)))),
      )
      .map(([key, value]) => `  ${key}: ${cell(value, 200)}`);
    return [`${error.code}: ${error.message}${request}`, ...issues, ...facts, ...rowProblems(details)].join('\n');
  }
  const lines = [`${error.code}: the release policy blocks this move${request}`, ...reasons.map((r) => `  - ${r}`)];
  const candidate = percentOf(details.candidatePassRate);
  const production = percentOf(details.productionPassRate);
  if (candidate !== null || production !== null)
    lines.push(
      `  pass rate: candidate ${candidate ?? '—'} · production ${production ?? '—'}${typeof details.evaluationId === 'string' ? ` (evaluation ${details.evaluationId})` : ''}`,
    );
  const regressions = Array.isArray(details.regressions) ? details.regressions : [];
  if (regressions.length) lines.push(`  regressed cases (${regressions.length}): ${regressions.join(', ')}`);
  return lines.join('\n');
}

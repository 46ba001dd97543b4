import Ajv, { type ValidateFunction } from 'ajv';
import type { CustomMetric } from '@/server/prompts/schemas';
import type { ChatMessage } from '@/server/models/types';
import { normalizeWhitespace } from '@/server/text';
import { patternTimeoutMs, timedOut, withinTime } from './time-bound';
import { boundedText } from '../../input-hygiene';

// Pure scoring of one evaluation output: the scoring method decides `passed`/`score`; the prompt's
// outputSchema and custom metrics add assertions that are shown but never change `passed` (an
// assertion failure never blocks initialization, spec "States and transitions").

export type Format = 'text' | 'json';
export type Assertion = { name: string; passed: boolean; message: string };
export type Verdict = { pass: boolean; score: number; reasoning: string };

// Deep equality of parsed JSON values; object key order is ignored, array order is not.
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && jsonEqual(left[key], right[key]));
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

// Models often wrap JSON in a Markdown fence; the fence is not part of the answer.
function unfence(text: string): string {
  const fenced = /^\s*```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return fenced ? fenced[1] : text;
}

// `expected`: exact after whitespace normalisation; with a JSON reference, JSON-equal (an output
// that is not JSON then fails, with a score of 0 like any other mismatch).
export function scoreExpected(
  output: string,
  expected: string,
  referenceFormat: Format,
): { passed: boolean; score: number } {
  let passed: boolean;
  if (referenceFormat === 'json') {
    const want = parseJson(expected);
    const got = parseJson(unfence(output).trim());
    passed =
      want.ok && got.ok
        ? jsonEqual(want.value, got.value)
        : normalizeWhitespace(output) === normalizeWhitespace(expected);
  } else {
    passed = normalizeWhitespace(output) === normalizeWhitespace(expected);
  }
  return { passed, score: passed ? 1 : 0 };
}

const judgeSystemPrompt = [
  'You are an evaluation judge. You grade one output of a prompt against a rubric.',
  'The user message is a JSON object with the fields rubric, input, expectedOutput and output.',
  'Answer with one JSON object and nothing else: {"pass": boolean, "score": number between 0 and 1, "reasoning": string}.',
].join('\n');

// What a judge route receives: the instructions, then the case as one JSON document, so the
// built-in local judge can read it back exactly and a real model sees unambiguous fields.
// expectedOutput is null when there is none (online evaluation of production spans).
export function judgeMessages(fields: {
  rubric: string;
  input: string;
  expectedOutput: string | null;
  output: string;
}): ChatMessage[] {
  return [
    { role: 'system', content: judgeSystemPrompt },
    {
      role: 'user',
      content: JSON.stringify({
        rubric: fields.rubric,
        input: fields.input,
        expectedOutput: fields.expectedOutput,
        output: fields.output,
      }),
    },
  ];
}

export const defaultRubric = 'The output is correct for the input and agrees with the expected output.';

// A judge's answer → verdict, or null when it is not one (the engine records an execution error).
export function parseVerdict(text: string): Verdict | null {
  let candidate = unfence(text).trim();
  let parsed = parseJson(candidate);
  if (!parsed.ok) {
    // Some models add a sentence around the object: take the outermost braces.
    const start = candidate.indexOf('{');
    const end = candidate.lastIndexOf('}');
    if (start === -1 || end <= start) return null;
    candidate = candidate.slice(start, end + 1);
    parsed = parseJson(candidate);
    if (!parsed.ok) return null;
  }
  const value = parsed.value as Record<string, unknown> | null;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const { pass, score, reasoning } = value;
  if (typeof pass !== 'boolean') return null;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return null;
  if (typeof reasoning !== 'string') return null;
  // Kept like a case's stored reasoning (evaluations and online scores alike): 10,000 characters.
  return { pass, score, reasoning: boundedText(reasoning, 10_000) };
}

const ajv = new Ajv({ strict: false, allErrors: false });
const compiled = new Map<string, ValidateFunction | Error>();

function validatorFor(schemaText: string): ValidateFunction | Error {
  let entry = compiled.get(schemaText);
  if (!entry) {
    try {
      entry = ajv.compile(JSON.parse(schemaText));
    } catch (error) {
      entry = error instanceof Error ? error : new Error(String(error));
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(schemaText, entry);
  }
  return entry;
}

function schemaAssertion(name: string, output: string, schemaText: string): Assertion {
  const parsed = parseJson(unfence(output).trim());
  if (!parsed.ok) return { name, passed: false, message: 'The output is not valid JSON.' };
  const validate = validatorFor(schemaText);
  if (validate instanceof Error)
    return { name, passed: false, message: `The schema cannot be used: ${validate.message}` };
  const valid = withinTime(() => validate(parsed.value));
  if (valid === timedOut)
    return {
      name,
      passed: false,
      message: `Checking the output against the schema took longer than ${patternTimeoutMs} ms (a pattern that backtracks); it was stopped.`,
    };
  if (valid) return { name, passed: true, message: 'The output matches the schema.' };
  return { name, passed: false, message: `The output does not match the schema: ${ajv.errorsText(validate.errors)}.` };
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

function metricAssertion(metric: CustomMetric, output: string, outputSchema: string): Assertion {
  const { name, value } = metric;
  switch (metric.type) {
    case 'contains': {
      const passed = output.includes(String(value ?? ''));
      return {
        name,
        passed,
        message: passed
          ? `The output contains ${quote(String(value))}.`
          : `The output does not contain ${quote(String(value))}.`,
      };
    }
    case 'not_contains': {
      const passed = !output.includes(String(value ?? ''));
      return {
        name,
        passed,
        message: passed
          ? `The output does not contain ${quote(String(value))}.`
          : `The output contains ${quote(String(value))}.`,
      };
    }
    case 'matches_regex': {
      let regex: RegExp;
      try {
        regex = new RegExp(String(value ?? ''));
      } catch (error) {
        return { name, passed: false, message: `The regular expression is not valid: ${(error as Error).message}` };
      }
      const passed = withinTime(() => regex.test(output));
      if (passed === timedOut)
        return {
          name,
          passed: false,
          message: `Matching /${String(value)}/ took longer than ${patternTimeoutMs} ms on this output (the expression backtracks); it was stopped.`,
        };
      return {
        name,
        passed,
        message: passed ? `The output matches /${String(value)}/.` : `The output does not match /${String(value)}/.`,
      };
    }
    case 'is_json': {
      const passed = parseJson(unfence(output).trim()).ok;
      return { name, passed, message: passed ? 'The output is valid JSON.' : 'The output is not valid JSON.' };
    }
    case 'matches_schema': {
      const schema = typeof value === 'string' ? value : outputSchema;
      if (!schema) return { name, passed: false, message: 'There is no schema to check against.' };
      return schemaAssertion(name, output, schema);
    }
    case 'max_chars': {
      const limit = Number(value);
      const length = [...output].length;
      const passed = length <= limit;
      return {
        name,
        passed,
        message: passed ? `${length} characters (at most ${limit}).` : `${length} characters, more than ${limit}.`,
      };
    }
  }
}

// outputSchema first (when set), then each custom metric in order.
export function runAssertions(
  output: string,
  content: { outputSchema?: string; customMetrics?: CustomMetric[] },
): Assertion[] {
  const assertions: Assertion[] = [];
  const outputSchema = content.outputSchema ?? '';
  if (outputSchema.trim() !== '') assertions.push(schemaAssertion('outputSchema', output, outputSchema));
  for (const metric of content.customMetrics ?? []) assertions.push(metricAssertion(metric, output, outputSchema));
  return assertions;
}

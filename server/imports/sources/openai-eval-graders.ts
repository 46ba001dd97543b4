import {
  checkScoring,
  isGiven,
  isRecord,
  listed,
  own,
  refuse,
  saysSomething,
  type JsonRecord,
  type Origins,
  type Scope,
} from './mapping';
import { messageText } from './openai-parts';

// An OpenAI eval's testing_criteria → our scoring policy (API.md "Moving prompts in and out",
// OpenAI evals), and the string check's reference template that gives each case's expected output.

const modelOutput = /^\s*\{\{\s*sample\.output_text\s*\}\}\s*$/;
const exactOperations = ['eq', 'like', 'ilike'];

export type Reference = { template: string; path: string };
type Grading = { scoring: unknown | null; scoringPath?: string; reference?: Reference };

const graderName = (grader: JsonRecord, k: number) => {
  const name = own(grader, 'name');
  return typeof name === 'string' ? `“${name}”` : `number ${k + 1}`;
};

/**
 * testing_criteria → our scoring: the first string_check (eq, like, ilike) → `expected`; else the
 * first score_model / label_model → `judge` with its messages as the rubric. The rest is noted.
 */
export function mapGraders(value: unknown, path: string, scope: Scope): Grading {
  if (!isGiven(value)) return { scoring: null };
  if (!Array.isArray(value)) {
    refuse(scope, path, 'Give testing_criteria as an array of graders.');
    return { scoring: null };
  }
  let check: { grader: JsonRecord; path: string; label: string } | undefined;
  let judge: { grader: JsonRecord; path: string; label: string } | undefined;
  value.forEach((grader: unknown, k) => {
    const graderPath = `${path}/${k}`;
    if (!isRecord(grader)) return refuse(scope, graderPath, 'Give each grader as an object.');
    const type = own(grader, 'type');
    const label = graderName(grader, k);
    if (type === 'string_check') {
      const operation = own(grader, 'operation');
      if (typeof operation === 'string' && exactOperations.includes(operation)) {
        if (check) scope.notes.add(`Only the first string check is carried: ${label} was not`);
        else check = { grader, path: graderPath, label };
      } else if (operation === 'ne') {
        scope.notes.add(
          `The string check ${label} (ne: the output must differ) has no counterpart here and was not carried`,
        );
      } else {
        refuse(scope, `${graderPath}/operation`, 'Give the operation: eq, ne, like or ilike.');
      }
    } else if (type === 'score_model' || type === 'label_model') {
      if (judge) scope.notes.add(`Only the first model grader is carried: ${label} was not`);
      else judge = { grader, path: graderPath, label };
    } else if (typeof type === 'string') {
      scope.notes.add(`The ${type} grader ${label} has no counterpart here and was not carried`);
    } else {
      refuse(scope, `${graderPath}/type`, 'Give the grader’s type.');
    }
  });
  if (check) {
    if (judge)
      scope.notes.add(
        `The model grader ${judge.label} was not carried: the string check decides (one scoring method per prompt)`,
      );
    return stringCheck(check.grader, check.path, check.label, scope);
  }
  return judge ? modelGrader(judge.grader, judge.path, judge.label, scope) : { scoring: null };
}

function stringCheck(grader: JsonRecord, path: string, label: string, scope: Scope): Grading {
  const operation = own(grader, 'operation');
  if (operation !== 'eq')
    scope.notes.add(`The string check ${label} uses ${String(operation)} (contains): here the match is exact`);
  const input = own(grader, 'input');
  if (typeof input === 'string' && !modelOutput.test(input))
    scope.notes.add(`The string check ${label} compares ${input}: here the model’s output is compared`);
  const reference = own(grader, 'reference');
  if (typeof reference !== 'string') {
    refuse(scope, `${path}/reference`, 'Give the reference as a string.');
    return { scoring: { method: 'expected' }, scoringPath: path };
  }
  return {
    scoring: { method: 'expected' },
    scoringPath: path,
    reference: { template: reference, path: `${path}/reference` },
  };
}

const modelGraderExtras = ['range', 'pass_threshold', 'sampling_params', 'labels', 'passing_labels'];

function modelGrader(grader: JsonRecord, path: string, label: string, scope: Scope): Grading {
  const rubric = rubricOf(own(grader, 'input'), `${path}/input`, scope);
  if (rubric === null) return { scoring: null };
  if (rubric === '') {
    refuse(scope, `${path}/input`, 'Give the grader’s messages: they become the judge’s rubric.');
    return { scoring: null };
  }
  if (rubric.includes('{{'))
    scope.notes.add(
      'The judge rubric keeps the grader’s templates as written: our judge sees the case’s input, expected output and output beside it',
    );
  const model = own(grader, 'model');
  let judgeModelRouteId: string | undefined;
  if (typeof model !== 'string' || model === '') refuse(scope, `${path}/model`, 'Give the grader’s model.');
  else if (scope.routeIds.has(`openai/${model}`)) judgeModelRouteId = `openai/${model}`;
  else
    scope.notes.add(`The judge model “${model}” has no route here (openai/${model}): the default judge route is used`);
  const extras = modelGraderExtras.filter((key) => saysSomething(own(grader, key)));
  if (extras.length > 0)
    scope.notes.add(
      `The model grader ${label} is carried without its ${listed(extras)}: our judge decides pass or fail`,
    );
  const policy = { method: 'judge', rubric, ...(judgeModelRouteId ? { judgeModelRouteId } : {}) };
  const origins: Origins = new Map([
    ['rubric', `${path}/input`],
    ['judgeModelRouteId', `${path}/model`],
  ]);
  checkScoring(policy, origins, path, scope.problems);
  return { scoring: policy, scoringPath: path };
}

// All of the grader's messages, in order, as "role: text" paragraphs.
function rubricOf(input: unknown, path: string, scope: Scope): string | null {
  if (!Array.isArray(input)) {
    refuse(scope, path, 'Give the grader’s input as an array of messages.');
    return null;
  }
  const before = scope.problems.length;
  const paragraphs: string[] = [];
  input.forEach((message: unknown, i) => {
    const messagePath = `${path}/${i}`;
    if (!isRecord(message)) return refuse(scope, messagePath, 'Give each message as an object with role and content.');
    const role = own(message, 'role');
    if (typeof role !== 'string') return refuse(scope, `${messagePath}/role`, 'Give the message’s role.');
    const content = own(message, 'content');
    const text = messageText(isRecord(content) ? [content] : content, `${messagePath}/content`, scope);
    if (text?.trim()) paragraphs.push(`${role}: ${text.trim()}`);
  });
  return scope.problems.length > before ? null : paragraphs.join('\n\n');
}

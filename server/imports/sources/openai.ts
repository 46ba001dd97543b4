import { extractVariables } from '../../prompts/schemas';
import type { MappedDocument, MappedPrompt, MapperOptions } from '../mapped';
import type { ImportProblem } from '../schemas';
import {
  checkContent,
  isGiven,
  isRecord,
  isVersionNumber,
  labelProduction,
  note,
  Notebook,
  own,
  promptName,
  refuse,
  saysSomething,
  tooDeep,
  versionMessage,
  type JsonRecord,
  type Origins,
  type Scope,
} from './mapping';
import {
  mapMaxTokens,
  mapModel,
  mapOutputFormat,
  mapTemperature,
  mapTools,
  messageText,
  ourRole,
  type Role,
} from './openai-parts';

// source "openai" (API.md "Moving prompts in and out"): the request bodies a team sends today, one
// object or an array, each a Responses or a Chat Completions body plus our `name` and `version`.
// Paths: an array's bodies are '/0', '/1', …; a single top-level body is the whole document, whose
// RFC 6901 pointer is '' (so its fields are '/name', '/messages/2/role').

const responsesFields = ['model', 'instructions', 'input', 'temperature', 'max_output_tokens', 'tools', 'text'];
const chatFields = [
  'model',
  'messages',
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'tools',
  'response_format',
];
const ourFields = ['name', 'version'];
// Fields whose loss needs more words than "no counterpart".
const fieldNotes: Record<string, string> = {
  prompt: 'prompt refers to a prompt stored at OpenAI, which cannot be read from here: it was not carried',
};

type Message = { role: Role; content: string };

/**
 * One Responses or Chat Completions body → our content (draftContentInput's shape), with every
 * refusal at the body's own field. `transformText` rewrites each message's text first (the eval
 * mapper turns `{{item.x}}` into `{{x}}`), so the checks see the text that will be stored.
 */
export function mapOpenAiBody(
  body: JsonRecord,
  path: string,
  scope: Scope,
  transformText: (text: string) => string = (text) => text,
): unknown {
  const origins: Origins = new Map();
  const isChat = own(body, 'messages') !== undefined;
  const isResponses = own(body, 'input') !== undefined || own(body, 'instructions') !== undefined;
  const messages: Message[] = [];
  const add = (role: Role, text: string, messagePath: string, contentPath: string) => {
    const content = transformText(text);
    if (content === '') return note(scope, 'Empty messages were left out');
    origins.set(`messages.${messages.length}`, messagePath);
    origins.set(`messages.${messages.length}.content`, contentPath);
    messages.push({ role, content });
  };
  const before = scope.problems.length;
  let container = path;
  if (isChat && isResponses) {
    refuse(scope, path, 'Give either messages (Chat Completions) or input and instructions (Responses), not both.');
  } else if (isChat) {
    container = `${path}/messages`;
    readChatMessages(own(body, 'messages'), container, scope, add);
  } else if (isResponses) {
    container = own(body, 'input') !== undefined ? `${path}/input` : `${path}/instructions`;
    readResponsesInput(body, path, scope, add);
  } else {
    refuse(scope, path, 'Give input and instructions (Responses) or messages (Chat Completions).');
  }
  origins.set('messages', container);
  if (messages.length === 0 && scope.problems.length === before)
    refuse(
      scope,
      container,
      'No message here can be carried: we keep text messages of system, developer, user and assistant.',
    );

  origins.set('modelRouteId', `${path}/model`);
  const modelRouteId = mapModel(own(body, 'model'), `${path}/model`, scope);
  origins.set('temperature', `${path}/temperature`);
  const temperature = mapTemperature(own(body, 'temperature'), `${path}/temperature`, scope);
  const maxOutputTokens = mapOutputTokens(body, path, isChat, scope, origins);
  const tools = mapTools(own(body, 'tools'), `${path}/tools`, scope, origins);
  const outputSchema = isChat
    ? mapOutputFormat(own(body, 'response_format'), `${path}/response_format`, 'chat', scope, origins)
    : mapTextFormat(own(body, 'text'), `${path}/text`, scope, origins);

  const carried = new Set([
    ...ourFields,
    ...(isChat ? chatFields : isResponses ? responsesFields : [...chatFields, ...responsesFields]),
  ]);
  for (const key of Object.keys(body)) {
    if (carried.has(key) || !saysSomething(body[key])) continue;
    note(scope, fieldNotes[key] ?? `${key} has no counterpart here and was not carried`);
  }

  const content = {
    messages,
    inputType: extractVariables(messages).length > 0 ? 'variables' : 'user_message',
    modelRouteId,
    ...(temperature === undefined ? {} : { temperature }),
    outputSchema,
    tools,
    maxOutputTokens,
  };
  checkContent(content, origins, path, scope.problems);
  return content;
}

type AddMessage = (role: Role, text: string, messagePath: string, contentPath: string) => void;

function readChatMessages(value: unknown, path: string, scope: Scope, add: AddMessage): void {
  if (!Array.isArray(value)) return refuse(scope, path, 'Give messages as an array.');
  value.forEach((message: unknown, i) => {
    const messagePath = `${path}/${i}`;
    if (!isRecord(message)) return refuse(scope, messagePath, 'Give each message as an object with role and content.');
    const read = readMessage(message, messagePath, scope);
    if (read) add(read.role, read.text, messagePath, `${messagePath}/content`);
  });
}

// `instructions` is the first system message; `input` (a string, or messages and other items) follows.
function readResponsesInput(body: JsonRecord, path: string, scope: Scope, add: AddMessage): void {
  const instructions = own(body, 'instructions');
  if (typeof instructions === 'string') add('system', instructions, `${path}/instructions`, `${path}/instructions`);
  else if (isGiven(instructions)) refuse(scope, `${path}/instructions`, 'Give the instructions as a string.');
  const input = own(body, 'input');
  if (typeof input === 'string') return add('user', input, `${path}/input`, `${path}/input`);
  if (!isGiven(input)) return;
  if (!Array.isArray(input)) return refuse(scope, `${path}/input`, 'Give input as a string or a list of input items.');
  input.forEach((item: unknown, i) => {
    const itemPath = `${path}/input/${i}`;
    const type = isRecord(item) ? own(item, 'type') : undefined;
    if (isRecord(item) && (type === undefined || type === 'message') && own(item, 'role') !== undefined) {
      const read = readMessage(item, itemPath, scope);
      if (read) add(read.role, read.text, itemPath, `${itemPath}/content`);
    } else if (isRecord(item) && typeof type === 'string') {
      note(scope, `Input items of type ${type} have no counterpart here and were left out`);
    } else {
      refuse(scope, itemPath, 'Give each input item as a message (role and content) or an item with a type.');
    }
  });
}

// A role we have (developer becomes system) and the message's text, or null when it is left out.
function readMessage(message: JsonRecord, path: string, scope: Scope): { role: Role; text: string } | null {
  const role = own(message, 'role');
  const mapped = ourRole(role);
  if (!mapped) {
    if (role === 'tool' || role === 'function')
      note(scope, `${role} messages (tool results) have no counterpart here and were left out`);
    else
      refuse(
        scope,
        `${path}/role`,
        typeof role === 'string'
          ? `“${role}” is not an OpenAI message role (system, developer, user, assistant, tool).`
          : 'Give the message’s role.',
      );
    return null;
  }
  if (isGiven(own(message, 'tool_calls')) || isGiven(own(message, 'function_call')))
    note(scope, 'Tool calls in assistant messages are not carried');
  if (isGiven(own(message, 'name'))) note(scope, 'Participant names on messages are not carried');
  const content = own(message, 'content');
  const text = content === undefined ? '' : messageText(content, `${path}/content`, scope);
  return text === null ? null : { role: mapped, text };
}

// max_output_tokens (Responses); max_completion_tokens, else the older max_tokens (Chat Completions).
function mapOutputTokens(
  body: JsonRecord,
  path: string,
  isChat: boolean,
  scope: Scope,
  origins: Origins,
): number | null {
  let field = 'max_output_tokens';
  if (isChat) {
    field = isGiven(own(body, 'max_completion_tokens')) ? 'max_completion_tokens' : 'max_tokens';
    if (field === 'max_completion_tokens' && isGiven(own(body, 'max_tokens')))
      note(scope, 'max_tokens is not carried: max_completion_tokens is used');
  }
  origins.set('maxOutputTokens', `${path}/${field}`);
  return mapMaxTokens(own(body, field), `${path}/${field}`, scope);
}

// Responses `text`: its `format` is the output schema; its other settings (verbosity) are noted.
function mapTextFormat(text: unknown, path: string, scope: Scope, origins: Origins): string {
  if (!isGiven(text)) return '';
  if (!isRecord(text)) {
    refuse(scope, path, 'Give text as an object.');
    return '';
  }
  for (const key of Object.keys(text))
    if (key !== 'format' && saysSomething(text[key]))
      note(scope, `text.${key} has no counterpart here and was not carried`);
  return mapOutputFormat(own(text, 'format'), `${path}/format`, 'responses', scope, origins);
}

/**
 * The document: one body or an array of bodies. Bodies with one name become one prompt; a body
 * without `version` takes its place among that name's bodies (1 for the first, 2 for the second).
 */
export function mapOpenAiDocument(document: unknown, options: MapperOptions): MappedDocument {
  const problems: ImportProblem[] = [];
  const mapped: MappedDocument = { prompts: [], notes: [], problems };
  if (tooDeep(document, problems)) return mapped;
  let bodies: [unknown, string][];
  if (Array.isArray(document)) bodies = document.map((body: unknown, i) => [body, `/${i}`]);
  else if (isRecord(document)) bodies = [[document, '']];
  else {
    problems.push({ path: '', message: 'Give one OpenAI request body (an object) or an array of them.' });
    return mapped;
  }
  const byName = new Map<
    string,
    { prompt: MappedPrompt; notes: Notebook; count: number; paths: Map<number, string> }
  >();
  for (const [body, path] of bodies) {
    if (!isRecord(body)) {
      problems.push({ path, message: 'Give each request body as an object.' });
      continue;
    }
    const name = promptName(own(body, 'name'), `${path}/name`, problems);
    if (name === null) continue;
    let entry = byName.get(name);
    if (!entry) {
      const prompt: MappedPrompt = { name, versions: [], labels: [], scoring: null, cases: [], notes: [], path };
      entry = { prompt, notes: new Notebook(), count: 0, paths: new Map() };
      byName.set(name, entry);
      mapped.prompts.push(prompt);
    }
    entry.count++;
    const given = own(body, 'version') ?? undefined;
    if (given !== undefined && !isVersionNumber(given)) {
      problems.push({ path: `${path}/version`, message: versionMessage });
      continue;
    }
    const version = given ?? entry.count;
    const earlier = entry.paths.get(version);
    if (earlier !== undefined) {
      problems.push({
        path: given === undefined ? path : `${path}/version`,
        message: `Version ${version} of “${name}” is given twice (also at ${earlier === '' ? 'the document' : earlier}).`,
      });
      continue;
    }
    entry.paths.set(version, path);
    const scope: Scope = { problems, notes: entry.notes, version, routeIds: options.routeIds };
    const content = mapOpenAiBody(body, path, scope);
    entry.prompt.versions.push({ version, content, createdAt: null, path });
  }
  for (const { prompt, notes } of byName.values()) {
    prompt.versions.sort((a, b) => a.version - b.version);
    labelProduction(prompt, options, problems);
    prompt.notes = notes.lines(prompt.versions.length);
  }
  return mapped;
}

import { localRouteId } from '../../models/routes';
import { isGiven, isRecord, listed, note, own, refuse, type Origins, type Scope } from './mapping';

// The pieces of OpenAI's request shapes that both the OpenAI mapper (whole bodies) and the Langfuse
// mapper (a prompt's `config`, which holds the same fields by convention) turn into our content.

export type Role = 'system' | 'user' | 'assistant';

// developer is OpenAI's newer name for system instructions.
export function ourRole(role: unknown): Role | null {
  if (role === 'system' || role === 'developer') return 'system';
  if (role === 'user' || role === 'assistant') return role;
  return null;
}

// 'openai/<model>' when that route exists here, else local/echo with a note naming the model.
export function mapModel(value: unknown, path: string, scope: Scope): string {
  if (!isGiven(value)) {
    note(scope, `No model is given: ${localRouteId} is used`);
    return localRouteId;
  }
  if (typeof value !== 'string' || value === '') {
    refuse(scope, path, 'Give the model as a string.');
    return localRouteId;
  }
  const routeId = `openai/${value}`;
  if (scope.routeIds.has(routeId)) return routeId;
  note(scope, `Model “${value}” has no route here (${routeId}): ${localRouteId} is used`);
  return localRouteId;
}

// Our temperature is 0 to 2 like OpenAI's; undefined keeps our default (1, OpenAI's default too).
export function mapTemperature(value: unknown, path: string, scope: Scope): number | undefined {
  if (!isGiven(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse(scope, path, 'Give the temperature as a number.');
  else if (value < 0 || value > 2) refuse(scope, path, `Temperature ${value} is outside our range of 0 to 2.`);
  else return value;
  return undefined;
}

const maxOutputTokens = 1_000_000;
export function mapMaxTokens(value: unknown, path: string, scope: Scope): number | null {
  if (!isGiven(value)) return null;
  if (typeof value !== 'number' || !Number.isInteger(value)) refuse(scope, path, 'Give a whole number of tokens.');
  else if (value < 1 || value > maxOutputTokens)
    refuse(scope, path, `Use 1 to ${maxOutputTokens.toLocaleString('en-US')} output tokens.`);
  else return value;
  return null;
}

// Our output schema is the JSON Schema as text; null when `schema` is not one (a problem is raised).
function schemaText(schema: unknown, path: string, scope: Scope): string | null {
  if (isRecord(schema)) return JSON.stringify(schema);
  refuse(scope, path, 'Give the JSON Schema as an object.');
  return null;
}

/**
 * `text.format` (Responses: `{ type, name, schema, strict }`) or `response_format` (Chat Completions:
 * `{ type, json_schema: { name, schema, strict } }`) → our outputSchema ('' for plain text).
 * `origins` learns where the schema came from, so a schema our checks refuse points at it.
 */
export function mapOutputFormat(
  format: unknown,
  path: string,
  style: 'responses' | 'chat',
  scope: Scope,
  origins: Origins,
): string {
  if (!isGiven(format)) return '';
  if (!isRecord(format)) {
    refuse(scope, path, 'Give the format as an object.');
    return '';
  }
  const type = own(format, 'type');
  if (type === 'text') return '';
  if (type === 'json_object') {
    note(scope, 'JSON mode (json_object) has no counterpart here: add an output schema to ask for JSON');
    return '';
  }
  if (type !== 'json_schema') {
    if (typeof type === 'string')
      note(scope, `The output format “${type}” has no counterpart here and was not carried`);
    else refuse(scope, `${path}/type`, 'Give the format’s type.');
    return '';
  }
  let holder = format;
  let holderPath = path;
  if (style === 'chat') {
    const inner = own(format, 'json_schema');
    if (!isRecord(inner)) {
      refuse(scope, `${path}/json_schema`, 'Give json_schema as an object with the schema.');
      return '';
    }
    holder = inner;
    holderPath = `${path}/json_schema`;
  }
  return schemaOf(holder, holderPath, scope, origins);
}

// `{ name, description, strict, schema }` → the schema's text, noting what else is not carried.
export function schemaOf(holder: Record<string, unknown>, path: string, scope: Scope, origins: Origins): string {
  const dropped = ['name', 'description', 'strict'].filter((key) => isGiven(own(holder, key)));
  if (dropped.length > 0)
    note(
      scope,
      `The output schema’s ${listed(dropped)} ${dropped.length === 1 ? 'is' : 'are'} not carried (the schema is)`,
    );
  origins.set('outputSchema', `${path}/schema`);
  return schemaText(own(holder, 'schema'), `${path}/schema`, scope) ?? '';
}

type ToolInput = { type: 'function'; name: unknown; description: string; parameters?: Record<string, unknown> };

/**
 * Function tools in any of the shapes in use: Responses `{ type: 'function', name, description,
 * parameters, strict }`, Chat Completions `{ type: 'function', function: { name, … } }`, and the
 * flat `{ name, description, parameters }` Langfuse configs also hold. Built-in tools (web_search,
 * file_search, …) are noted and dropped; `strict` is noted.
 */
export function mapTools(value: unknown, path: string, scope: Scope, origins: Origins): ToolInput[] {
  if (!isGiven(value)) return [];
  if (!Array.isArray(value)) {
    refuse(scope, path, 'Give the tools as an array.');
    return [];
  }
  origins.set('tools', path);
  const tools: ToolInput[] = [];
  value.forEach((tool: unknown, i) => {
    const toolPath = `${path}/${i}`;
    if (!isRecord(tool)) return refuse(scope, toolPath, 'Give each tool as an object.');
    const type = own(tool, 'type');
    const wrapped = own(tool, 'function');
    const isFunction =
      type === 'function' || (type === undefined && (isRecord(wrapped) || Object.hasOwn(tool, 'name')));
    if (!isFunction) {
      if (typeof type === 'string') note(scope, `Built-in tools (${type}) have no counterpart here and were dropped`);
      else refuse(scope, `${toolPath}/type`, 'Give the tool’s type.');
      return;
    }
    if (wrapped !== undefined && !isRecord(wrapped))
      return refuse(scope, `${toolPath}/function`, 'Give the function as an object.');
    const definition = isRecord(wrapped) ? wrapped : tool;
    const definitionPath = isRecord(wrapped) ? `${toolPath}/function` : toolPath;
    const mapped = functionTool(definition, definitionPath, scope);
    if (!mapped) return;
    if (isGiven(own(tool, 'strict')) || isGiven(own(definition, 'strict')))
      note(scope, 'The strict setting of function tools is not carried');
    const k = tools.length;
    origins.set(`tools.${k}`, toolPath);
    for (const field of ['name', 'description', 'parameters'])
      origins.set(`tools.${k}.${field}`, `${definitionPath}/${field}`);
    tools.push(mapped);
  });
  return tools;
}

function functionTool(definition: Record<string, unknown>, path: string, scope: Scope): ToolInput | null {
  const name = own(definition, 'name');
  const description = own(definition, 'description');
  const parameters = own(definition, 'parameters');
  const before = scope.problems.length;
  if (typeof name !== 'string') refuse(scope, `${path}/name`, 'Give the function’s name.');
  if (isGiven(description) && typeof description !== 'string')
    refuse(scope, `${path}/description`, 'Give the description as a string.');
  if (isGiven(parameters) && !isRecord(parameters))
    refuse(scope, `${path}/parameters`, 'Give the parameters as a JSON Schema object.');
  if (scope.problems.length > before) return null;
  return {
    type: 'function',
    name,
    description: typeof description === 'string' ? description : '',
    ...(isRecord(parameters) ? { parameters } : {}),
  };
}

const textPartTypes = new Set(['text', 'input_text', 'output_text']);

/**
 * A message's content as our text: a string as it is, a list of parts as its text parts joined by
 * new lines (Chat `text`, Responses `input_text` / `output_text`); other parts (images, files,
 * audio, refusals) are noted. null when the content cannot be read (a problem is raised).
 */
export function messageText(content: unknown, path: string, scope: Scope): string | null {
  if (typeof content === 'string') return content;
  if (content === null) return '';
  if (!Array.isArray(content)) {
    refuse(scope, path, 'Give the content as text or a list of content parts.');
    return null;
  }
  const texts: string[] = [];
  let readable = true;
  content.forEach((part: unknown, i) => {
    const partPath = `${path}/${i}`;
    const type = isRecord(part) ? own(part, 'type') : undefined;
    if (!isRecord(part) || typeof type !== 'string') {
      readable = false;
      return refuse(scope, partPath, 'Give each content part as an object with a type.');
    }
    if (!textPartTypes.has(type)) return note(scope, `Non-text message parts (${type}) are not carried`);
    const text = own(part, 'text');
    if (typeof text === 'string') return texts.push(text);
    readable = false;
    refuse(scope, `${partPath}/text`, 'Give the part’s text as a string.');
  });
  return readable ? texts.join('\n') : null;
}

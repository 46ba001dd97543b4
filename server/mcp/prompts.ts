import type { GetPromptResult, ListPromptsResult, Prompt as McpPrompt } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceContext } from '../context';
import { AppError, invalidRequest, isAppError, notFound } from '../errors';
import { listOrganizations } from '../orgs/service';
import { getPrompt, listPrompts } from '../prompts/service';
import { getVersion } from '../prompts/versions';
import { extractVariables, type DraftContent, type Prompt } from '../prompts/schemas';
import type { Organization } from '../orgs/schemas';
import { renderMessages } from '../models/render';
import { assertCleanInput } from '../input-hygiene';

// Active prompts as MCP prompts (decisions.md "M6"): every active prompt of every organization the
// caller belongs to, named by its prompt id (stable and unique; the title is its name), served at
// the version the `production` label points at, with that version's variables as arguments
// (a user-message prompt takes one argument, `input`).

const pageSize = 25;
const maxOrganizations = 1000;

async function organizationsOf(ctx: ServiceContext): Promise<Organization[]> {
  const all: Organization[] = [];
  let cursor: string | undefined;
  do {
    const page = await listOrganizations(ctx, { limit: 100, cursor });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && all.length < maxOrganizations);
  return all;
}

async function production(
  ctx: ServiceContext,
  organizationId: string,
  prompt: Prompt,
): Promise<{ number: number; content: DraftContent } | null> {
  const label = prompt.labels.find((l) => l.label === 'production');
  if (!label) return null;
  const version = await getVersion(ctx, { organizationId, promptId: prompt.id, number: label.version });
  return { number: version.number, content: version.content as DraftContent };
}

function argumentsOf(content: DraftContent): NonNullable<McpPrompt['arguments']> {
  if (content.inputType === 'user_message')
    return [{ name: 'input', description: 'The user message to send after the prompt’s messages.', required: true }];
  return extractVariables(content.messages).map((name) => ({
    name,
    description: `Value for {{${name}}}`,
    required: true,
  }));
}

const listed = (names: string[]) => `${names.length === 1 ? 'argument' : 'arguments'}: ${names.join(', ')}`;

// The arguments prompts/list announces, checked all at once: one message names every missing and
// every unknown argument, once each, and each has its issue.
function checkArguments(content: DraftContent, args: Record<string, string>): void {
  const expected = argumentsOf(content).map((argument) => argument.name);
  const missing = expected.filter((name) => !Object.hasOwn(args, name));
  const unknown = Object.keys(args).filter((name) => !expected.includes(name));
  if (!missing.length && !unknown.length) return;
  const parts: string[] = [];
  if (missing.length) parts.push(`Missing ${listed(missing)}.`);
  if (unknown.length) parts.push(`Unknown ${listed(unknown)} (this prompt takes ${expected.join(', ') || 'none'}).`);
  throw invalidRequest(parts.join(' '), [
    ...missing.map((path) => ({ path, message: 'This argument is required.' })),
    ...unknown.map((path) => ({ path, message: 'The prompt has no such argument.' })),
  ]);
}

// The cursor names the organization to continue in and the prompt list's own cursor there.
function encodeCursor(organizationId: string, promptCursor: string | null): string {
  return Buffer.from(JSON.stringify([organizationId, promptCursor])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string | null] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      (value[1] === null || typeof value[1] === 'string')
    )
      return [value[0], value[1]];
  } catch {
    // fall through
  }
  throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
}

export async function listMcpPrompts(ctx: ServiceContext, cursor: string | undefined): Promise<ListPromptsResult> {
  const organizations = await organizationsOf(ctx);
  let [organizationId, promptCursor] = cursor ? decodeCursor(cursor) : [organizations[0]?.id ?? '', null];
  let index = organizations.findIndex((o) => o.id === organizationId);
  if (cursor && index === -1)
    throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
  const prompts: McpPrompt[] = [];
  while (index !== -1 && index < organizations.length) {
    const organization = organizations[index];
    const page = await listPrompts(ctx, {
      organizationId: organization.id,
      state: 'active',
      limit: pageSize - prompts.length,
      cursor: promptCursor ?? undefined,
    });
    for (const prompt of page.items) {
      const version = await production(ctx, organization.id, prompt);
      if (!version) continue;
      prompts.push({
        name: prompt.id,
        title: prompt.name,
        description: `${prompt.name} (${organization.name}, production: version ${version.number})`,
        arguments: argumentsOf(version.content),
      });
    }
    if (page.nextCursor) {
      promptCursor = page.nextCursor;
      if (prompts.length >= pageSize) return { prompts, nextCursor: encodeCursor(organization.id, promptCursor) };
      continue;
    }
    index += 1;
    promptCursor = null;
    if (prompts.length >= pageSize && index < organizations.length)
      return { prompts, nextCursor: encodeCursor(organizations[index].id, null) };
  }
  return { prompts };
}

export async function getMcpPrompt(
  ctx: ServiceContext,
  name: string,
  args: Record<string, string> = {},
): Promise<GetPromptResult> {
  assertCleanInput({ name, arguments: args }, 'prompt request');
  if (!/^prm_[A-Za-z0-9_-]{1,100}$/.test(name)) throw notFound('Prompt');
  for (const organization of await organizationsOf(ctx)) {
    let prompt: Prompt;
    try {
      prompt = await getPrompt(ctx, { organizationId: organization.id, promptId: name });
    } catch (error) {
      if (isAppError(error) && error.code === 'not_found') continue;
      throw error;
    }
    const version = prompt.state === 'active' ? await production(ctx, organization.id, prompt) : null;
    if (!version)
      throw new AppError('invalid_state', 'Only active prompts are served as MCP prompts.', { state: prompt.state });
    checkArguments(version.content, args);
    const userMessage = version.content.inputType === 'user_message';
    const messages = renderMessages(version.content, userMessage ? { input: args.input } : { variables: args });
    return {
      description: `${prompt.name} (${organization.name}, production: version ${version.number})`,
      // MCP prompt messages are user or assistant: a system message is given as a user message.
      messages: messages.map((message) => ({
        role: message.role === 'assistant' ? 'assistant' : 'user',
        content: { type: 'text', text: message.content },
      })),
    };
  }
  throw notFound('Prompt');
}

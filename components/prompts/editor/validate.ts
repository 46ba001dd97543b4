import { nestsDeeperThan } from '@/lib/json-depth';
import { toolLimits, toolNamePattern } from '@/lib/tools';
import type { CustomMetric, DraftContent } from '../types';

// What the browser can tell before saving; keys are the server's issue paths so both kinds of
// message land on the same field. The server stays the authority (its issues are shown too).
function outputSchemaError(schema: string): string | null {
  if (schema.trim() === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(schema);
  } catch (error) {
    return `Not valid JSON: ${(error as Error).message}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'A JSON Schema must be a JSON object, for example {"type": "object"}.';
  return null;
}

function metricValueError(metric: CustomMetric, content: Pick<DraftContent, 'outputSchema'>): string | null {
  switch (metric.type) {
    case 'contains':
    case 'not_contains':
      return typeof metric.value === 'string' && metric.value !== '' ? null : 'Enter the text to look for.';
    case 'matches_regex':
      if (typeof metric.value !== 'string' || metric.value === '') return 'Enter a regular expression.';
      try {
        new RegExp(metric.value);
        return null;
      } catch (error) {
        return `Not a valid regular expression: ${(error as Error).message}`;
      }
    case 'max_chars':
      return typeof metric.value === 'number' && Number.isInteger(metric.value) && metric.value >= 1
        ? null
        : 'Enter a whole number of characters, at least 1.';
    case 'matches_schema':
      return content.outputSchema.trim() === ''
        ? 'Add an output schema first: this metric checks outputs against it.'
        : null;
    default:
      return null;
  }
}

export function validateContent(content: DraftContent): Record<string, string> {
  const issues: Record<string, string> = {};
  content.messages.forEach((message, i) => {
    if (message.content.trim() === '') issues[`content.messages.${i}.content`] = 'Write the message, or remove it.';
  });
  if (!(content.temperature >= 0 && content.temperature <= 2))
    issues['content.temperature'] = 'Temperature goes from 0 to 2.';
  const schemaError = outputSchemaError(content.outputSchema);
  if (schemaError) issues['content.outputSchema'] = schemaError;
  const limit = content.maxOutputTokens;
  if (limit !== null && !(Number.isInteger(limit) && limit >= 1 && limit <= toolLimits.maxOutputTokens))
    issues['content.maxOutputTokens'] = 'Enter a whole number from 1 to 1,000,000, or leave it empty.';
  const toolNames = new Set<string>();
  content.tools.forEach((tool, i) => {
    if (tool.name === '') issues[`content.tools.${i}.name`] = 'Name the tool.';
    else if (!toolNamePattern.test(tool.name))
      issues[`content.tools.${i}.name`] = 'Use up to 64 letters, digits, underscores or hyphens.';
    else if (toolNames.has(tool.name)) issues[`content.tools.${i}.name`] = 'Another tool already has this name.';
    toolNames.add(tool.name);
    if (tool.description.length > toolLimits.descriptionChars)
      issues[`content.tools.${i}.description`] =
        `Use at most ${toolLimits.descriptionChars.toLocaleString('en')} characters.`;
    if ('type' in tool.parameters && tool.parameters.type !== 'object')
      issues[`content.tools.${i}.parameters`] = 'The arguments of a function are an object: use "type": "object".';
    // The server's own message (a schema much deeper would not even reach it: the request body nests
    // more than 64 levels and is refused as a whole, with no field to point at).
    else if (nestsDeeperThan(tool.parameters, toolLimits.parametersDepth))
      issues[`content.tools.${i}.parameters`] = `Must not nest more than ${toolLimits.parametersDepth} levels.`;
  });
  const names = new Set<string>();
  content.customMetrics.forEach((metric, i) => {
    const name = metric.name.trim();
    if (name === '') issues[`content.customMetrics.${i}.name`] = 'Name the metric.';
    else if (names.has(name)) issues[`content.customMetrics.${i}.name`] = 'Another metric already has this name.';
    names.add(name);
    const valueError = metricValueError(metric, content);
    if (valueError) issues[`content.customMetrics.${i}.value`] = valueError;
  });
  return issues;
}

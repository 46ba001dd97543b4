// The guide for people moving prompts in from OpenAI or Langfuse (linked from the empty prompts page
// and the import dialog).
export function importGuidePath(organizationId: string): string {
  return `/organizations/${organizationId}/prompts/guide`;
}

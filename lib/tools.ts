// Limits of a content's function tools and output token limit, shared by the server and the browser
// (no dependencies, so the editor can load it). The name pattern is what OpenAI's function
// definitions accept.

export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

export const toolLimits = {
  tools: 64,
  descriptionChars: 10_000,
  parametersChars: 100_000,
  maxOutputTokens: 1_000_000,
} as const;

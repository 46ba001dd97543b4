// Limits of a content's function tools and output token limit, shared by the server and the browser
// (no dependencies, so the editor can load it). The name pattern is what OpenAI's function
// definitions accept.

export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

export const toolLimits = {
  tools: 64,
  descriptionChars: 10_000,
  parametersChars: 100_000,
  // Levels of a tool's parameters schema, itself counted. Below the 64 of a request body by the
  // levels around it in the deepest body that carries it (an MCP import of a bundle: 11), so any
  // prompt saved here can be exported and imported again on every surface.
  parametersDepth: 48,
  maxOutputTokens: 1_000_000,
} as const;

import { z } from 'zod';

// Integers the caller sends, bounded so that a value the database cannot hold (Postgres integer)
// is a 400 naming its field, never a database error; and the bound shows in the OpenAPI document.
export const maxStoredInt = 2_147_483_647;

// The last millisecond a JavaScript Date (and so every page that shows a time) can hold: every
// Unix-milliseconds field and parameter is bounded by it.
export const maxUnixMs = 8.64e15;

/** A mean score (0–1) to 6 decimals: sums of floats leave noise (0.15000000000000002) nobody should read. */
export function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

export function storedInt(min: number, max: number = maxStoredInt) {
  return z.number().int().min(min).max(max);
}

// The JSON Schema of schemas whose generated one would say less than what they accept (read by
// jsonSchemaOf below).
const documented = new WeakMap<z.ZodType, Record<string, unknown>>();

// The documentation of a schema, or of the schema it was cloned from: `.describe()` and `.meta()`
// return a clone whose `_zod.parent` is the original.
function documentationOf(schema: z.ZodType): Record<string, unknown> | undefined {
  for (let s: z.core.$ZodType | undefined = schema; s; s = s._zod.parent) {
    const own = documented.get(s as z.ZodType);
    if (own) return own;
  }
  return undefined;
}

// A schema that documents itself replaces what zod would generate for it, keeping its description.
function override(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const own = documentationOf(ctx.zodSchema as z.ZodType);
  if (!own) return;
  const { description } = ctx.jsonSchema;
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, own, description === undefined ? {} : { description });
}

/** The JSON Schema of a zod schema as the OpenAPI document and the CLI read it (no `$schema`). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', override }) as Record<
    string,
    unknown
  >;
  return rest;
}

const digits = /^(0|[1-9][0-9]{0,15})$/;

// An integer in a query string or a path: plain decimal digits only ("1e2", "+5", " 5", "5.0" and
// "0x10" are refused like any other non-integer), from `min` to `max`; the dashboard's tRPC calls
// send the same inputs as JSON numbers. Documented as the integer it stands for.
export function integerParam(
  min: number,
  max: number = maxStoredInt,
  message = `Must be a whole number from ${min} to ${max}, written in digits.`,
) {
  const schema = z
    .union([z.number(), z.string().regex(digits).transform(Number)], { error: message })
    .pipe(z.number().int(message).min(min, message).max(max, message));
  documented.set(schema, { type: 'integer', minimum: min, maximum: max });
  return schema;
}

export function integerParamWithDefault(min: number, max: number, fallback: number) {
  const schema = integerParam(min, max).default(fallback);
  documented.set(schema, { type: 'integer', minimum: min, maximum: max, default: fallback });
  return schema;
}

import { z } from 'zod';
import type { TRPCMutationProcedure, TRPCQueryProcedure } from '@trpc/server';
import { operationList, type OperationDeclaration, type OperationId, type Operations } from '@/server/operations';
import { services } from '@/server/api/handlers';
import type { AnyObject } from '@/server/operations/declare';
import { protectedProcedure, type TrpcMeta } from './init';
import { infiniteDirection } from './routers/paging';

// The dashboard's procedures for the operations of the table (DESIGN.md "One declaration per
// operation"), under the names the components call (`dashboard` in each declaration): the input
// is the operation's params + query + body as one object, passed straight to its service, as REST,
// MCP and the CLI do. GET is a query, every other method a mutation (in the edge transaction unless
// the declaration says `transaction: false`); a 204 answers null.

// TanStack's infinite queries add `direction` to a paged query's input; services never see it.
const isPaged = (operation: OperationDeclaration): boolean =>
  operation.method === 'GET' && Boolean(operation.query?.shape.cursor);

// One object schema from the three parts (their names never clash: assertFlatInput). A refined part
// (listTracesQuery) keeps its refinement: it is the base, extended with safeExtend.
function inputOf(operation: OperationDeclaration): AnyObject | undefined {
  const parts = [operation.body as AnyObject | undefined, operation.query, operation.params].filter(
    (part): part is AnyObject => part !== undefined,
  );
  const [base, ...others] = parts;
  if (!base) return undefined;
  // Only the base keeps its refinements: a second refined part would lose them silently.
  if (others.some((part) => part._zod.def.checks?.length))
    throw new Error(`Operation ${operation.id}: only one refined input part is supported.`);
  const shape = Object.assign({}, ...others.map((part) => part.shape), isPaged(operation) ? infiniteDirection : {});
  return base.safeExtend(shape);
}

function procedureOf(operation: OperationDeclaration) {
  const service = services[operation.id as OperationId] as (ctx: unknown, input: unknown) => Promise<unknown>;
  const paged = isPaged(operation);
  const input = inputOf(operation);
  const builder =
    operation.transaction === false ? protectedProcedure.meta({ transaction: false }) : protectedProcedure;
  // An operation without input (get_profile) takes none, as a procedure without .input() does.
  const procedure = input ? builder.input(input) : builder;
  const resolve = async ({ ctx, input }: { ctx: unknown; input: unknown }) => {
    const { direction: _direction, ...rest } = (input ?? {}) as Record<string, unknown>;
    const result = await service(ctx, paged ? rest : input);
    return operation.status === 204 ? null : result;
  };
  return operation.method === 'GET' ? procedure.query(resolve) : procedure.mutation(resolve);
}

// ---- types: each procedure with its operation's exact input and its service's result ----

type In<D, K extends string> = D extends { [key in K]: infer S extends z.ZodType } ? z.input<S> : unknown;
type Direction = { direction?: 'forward' | 'backward' | undefined };
type InputOf<K extends OperationId> = Operations[K] extends { params: object } | { query: object } | { body: object }
  ? PartsOf<K>
  : void;
type PartsOf<K extends OperationId> = In<Operations[K], 'params'> &
  In<Operations[K], 'query'> &
  In<Operations[K], 'body'> &
  (Operations[K] extends { method: 'GET'; query: { shape: { cursor: z.ZodType } } } ? Direction : unknown);
type OutputOf<K extends OperationId> = Operations[K] extends { status: 204 }
  ? null
  : Awaited<ReturnType<(typeof services)[K]>>;
type Def<K extends OperationId> = { input: InputOf<K>; output: OutputOf<K>; meta: TrpcMeta };
type ProcedureOf<K extends OperationId> = Operations[K]['method'] extends 'GET'
  ? TRPCQueryProcedure<Def<K>>
  : TRPCMutationProcedure<Def<K>>;

type NameOf<K extends OperationId> = Operations[K]['dashboard'];
type Area = { [K in OperationId]: NameOf<K> extends `${infer A}.${string}` ? A : never }[OperationId];
export type OperationProcedures = {
  [A in Area]: { [K in OperationId as NameOf<K> extends `${A}.${infer P}` ? P : never]: ProcedureOf<K> };
};

/** Every operation of the table as a tRPC procedure, grouped by area: plain objects for router({}). */
export function operationProcedures(): OperationProcedures {
  const areas: Record<string, Record<string, unknown>> = {};
  for (const operation of operationList) {
    const [area, name] = operation.dashboard.split('.');
    areas[area] ??= {};
    if (areas[area][name]) throw new Error(`Two operations are the dashboard's ${operation.dashboard}.`);
    areas[area][name] = procedureOf(operation);
  }
  return areas as unknown as OperationProcedures;
}

import { TRPCError } from '@trpc/server';
import { expect } from 'vitest';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';

// A dashboard caller for a user (or signed out), as the browser's session would make it.
export async function caller(userId: string | null) {
  return createCaller(
    await createTrpcContext({ actor: userId ? { userId, clientId: 'dashboard', human: true } : null }),
  );
}

export type Rejection = TRPCError & {
  cause: { code: string; details: Record<string, unknown>; headers: Record<string, string> };
};

// The TRPCError a call was refused with (the test fails when it was not refused).
export async function rejection(promise: Promise<unknown>): Promise<Rejection> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return error as never;
}

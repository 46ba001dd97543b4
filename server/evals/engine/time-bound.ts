import vm from 'node:vm';

// Patterns that users write (a custom metric's regular expression, a JSON Schema's `pattern`) run
// on model output, which nobody controls. A pattern such as /(a+)+$/ backtracks for minutes on a
// few dozen characters, and the engine runs in the server's process: one case would stop every
// request. So such checks run under V8's execution timeout (node:vm's watchdog interrupts a
// regular expression in the middle of its backtracking), which costs about 0.1 ms a call.

export const patternTimeoutMs = 100;

const context = vm.createContext({ run: undefined as (() => unknown) | undefined });
const script = new vm.Script('run()');

/** `run()`'s result, or `timedOut` when it ran longer than `timeoutMs` (it was stopped). */
export function withinTime<T>(run: () => T, timeoutMs = patternTimeoutMs): T | typeof timedOut {
  context.run = run;
  try {
    return script.runInContext(context, { timeout: timeoutMs }) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return timedOut;
    throw error;
  } finally {
    context.run = undefined;
  }
}

export const timedOut: unique symbol = Symbol('timed out');

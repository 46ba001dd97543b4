import { networkError } from './errors.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** The runtime's own fetch, bound so that it can be called detached (Deno and some edge runtimes require it). */
export function defaultFetch(): FetchLike {
  const found = (globalThis as { fetch?: FetchLike }).fetch;
  if (typeof found !== 'function') throw new TypeError('No global fetch in this runtime: pass `fetch` in the options.');
  return found.bind(globalThis);
}

export function trimBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

export type Answer = { response: Response; text: string };

/**
 * One request with a timeout (AbortController + setTimeout, which every runtime has). Resolves with
 * the answer and its whole body text, or rejects with a NetworkError (`network_error` or `timeout`).
 */
export async function request(fetchImpl: FetchLike, url: string, init: RequestInit, timeoutMs: number, what: string, cancel?: AbortSignal): Promise<Answer> {
  const controller = new AbortController();
  let timedOut = false;
  const onCancel = () => controller.abort();
  cancel?.addEventListener('abort', onCancel);
  const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort()), timeoutMs) : undefined;
  try {
    const response = await fetchImpl(url, { ...init, signal: controller.signal });
    const text = await response.text();
    return { response, text };
  } catch (error) {
    throw networkError(error, timedOut, what);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    cancel?.removeEventListener('abort', onCancel);
  }
}

import { networkError } from './errors.js';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** The runtime's own fetch, bound so that it can be called detached (Deno and some edge runtimes require it). */
export function defaultFetch(): FetchLike {
  const found = (globalThis as { fetch?: FetchLike }).fetch;
  if (typeof found !== 'function') throw new TypeError('No global fetch in this runtime: pass `fetch` in the options.');
  return found.bind(globalThis);
}

const apiPrefix = '/api/v1';

/**
 * The service's root URL, to which the SDK appends `/api/v1/…` itself. Trailing slashes are removed,
 * and so is a trailing `/api/v1` (or `/api/v1` + `endpoint`, e.g. `/traces`): that base names the
 * same service, so it is accepted rather than turned into `…/api/v1/api/v1/…` and a puzzling 404.
 */
export function trimBaseUrl(url: string, endpoint = ''): string {
  assertHttpUrl(url);
  let root = url.replace(/\/+$/, '');
  if (endpoint && root.endsWith(apiPrefix + endpoint)) root = root.slice(0, -endpoint.length);
  if (root.endsWith(apiPrefix)) root = root.slice(0, -apiPrefix.length);
  return root;
}

export type Answer = { response: Response; text: string };

/**
 * One request with a timeout (AbortController + setTimeout, which every runtime has). Resolves with
 * the answer and its whole body text, or rejects with a NetworkError (`network_error` or `timeout`).
 */
export async function request(
  fetchImpl: FetchLike,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  what: string,
  cancel?: AbortSignal,
): Promise<Answer> {
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

/**
 * A base URL must name an http(s) server: `localhost:3000` (no scheme) would otherwise fail every
 * request as a network error, which retrieval answers from its cache or fallback as if the service
 * were down, so a typo in the configuration could go unnoticed.
 */
function assertHttpUrl(url: string): void {
  let protocol = '';
  try {
    protocol = new URL(url).protocol;
  } catch {
    // reported below
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new TypeError(
      `Promptloop: "${url}" is not an http(s) URL; give the service's address with its scheme, like https://promptloop.example.com.`,
    );
}

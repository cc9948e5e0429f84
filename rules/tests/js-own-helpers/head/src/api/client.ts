import fetchRetry from "fetch-retry";

// ruleid: js/retry-helper-write
export const appFetch = fetchRetry(fetch, { retries: 3, retryDelay: 500 });

// ok: js/retry-helper-write
export const readFetch = fetchRetry(fetch, { retries: 3 });

export async function resilient<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await fn();
    } catch (e) {
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
  return fn();
}

export function traced<T>(fn: () => Promise<T>): Promise<T> {
  console.log("call");
  return fn();
}

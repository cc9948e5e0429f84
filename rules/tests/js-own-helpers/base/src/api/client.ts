import fetchRetry from "fetch-retry";

export const appFetch = (url: string, init?: RequestInit) => fetch(url, init);

export const readFetch = (url: string) => fetch(url);

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

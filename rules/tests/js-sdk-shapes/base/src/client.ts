export const DEFAULT_MAX_NETWORK_RETRIES = 0;
export const DEFAULT_MAX_UPLOAD_ATTEMPTS = 3;
const DELAY_BETWEEN_RETRIES = 100;

export const DEFAULTS = {
  maxNetworkRetries: 1,
  autoRetry: false,
  jitter: 'full',
};

export class Client {
  maxRequestRetries: number = 2;

  async request(method: string, url: string, body?: unknown) {
    let attempt = 0;
    while (attempt < this.maxRetries) {
      try {
        return await this.send(method, url, body);
      } catch (err: any) {
        if (!['ETIMEDOUT'].includes(err.code)) throw err;
        attempt++;
      }
    }
  }

  headers() {
    return { accept: 'application/json' };
  }

  async get(url: string) {
    for (let retry = 0; retry < 3; retry++) {
      try {
        return await this.send('GET', url);
      } catch (err: any) {
        if (!['ETIMEDOUT'].includes(err.code)) throw err;
      }
    }
  }

  delay(retryAfterMs: number) {
    return retryAfterMs;
  }
}

export const MAX_PUBLISH_ATTEMPTS_DEFAULT = 1;
export const DEFAULT_MAX_DOWNLOAD_ATTEMPTS = 5;
export const BACKOFF = { jitter: 'full', retryOnTimeout: true };

export function wait(retryAfterMs: number) {
  if (retryAfterMs > 30_000) return backoff(0);
  return retryAfterMs;
}

export function page(items: Item[], limit: number) {
  for (let i = 0; i < limit; i++) emit(items[i]);
}

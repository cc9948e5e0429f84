// ruleid: js/retry-count-name-raised
export const DEFAULT_MAX_NETWORK_RETRIES = 2;
// ruleid: js/attempt-count-name-raised
export const DEFAULT_MAX_UPLOAD_ATTEMPTS = 5;
// ok: js/retry-count-name-raised
const DELAY_BETWEEN_RETRIES = 500;

export const DEFAULTS = {
  // ruleid: js/retry-count-name-raised
  maxNetworkRetries: 3,
  // ruleid: js/retry-enabled-by-default
  autoRetry: true,
  // ruleid: js/jitter-option-disabled
  jitter: 'none',
};

export class Client {
  // ok: js/retry-count-name-raised
  maxRequestRetries: number = 1;

  async request(method: string, url: string, body?: unknown) {
    let attempt = 0;
    // ruleid: js/retry-loop-bound-widened
    while (attempt <= this.maxRetries) {
      try {
        return await this.send(method, url, body);
      } catch (err: any) {
        // ruleid: js/retry-on-connection-errors-added
        if (!['ETIMEDOUT', 'ECONNRESET'].includes(err.code)) throw err;
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
        // ok: js/retry-on-connection-errors-added
        if (!['ETIMEDOUT', 'ECONNRESET'].includes(err.code)) throw err;
      }
    }
  }

  delay(retryAfterMs: number) {
    // ruleid: js/retry-after-capped
    return Math.min(retryAfterMs, this.maxDelayMs);
  }
}

export const MAX_PUBLISH_ATTEMPTS_DEFAULT = 1;
// ok: js/attempt-count-name-raised
export const DEFAULT_MAX_DOWNLOAD_ATTEMPTS = 3;
// ok: js/jitter-option-disabled, js/retry-enabled-by-default
export const BACKOFF = { jitter: 'full', retryOnTimeout: false };

export function wait(retryAfterMs: number) {
  // ok: js/retry-after-capped
  if (retryAfterMs > 60_000) return backoff(0);
  return retryAfterMs;
}

export function page(items: Item[], limit: number) {
  // ok: js/retry-loop-bound-widened
  for (let i = 0; i <= limit; i++) emit(items[i]);
}

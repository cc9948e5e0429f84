import * as rax from 'retry-axios';
import fetchRetry from 'fetch-retry';
import { Kafka } from 'kafkajs';

const api = axios.create();
// ruleid: js/retry-count-option-raised, js/retry-admits-post
api.defaults.raxConfig = { retry: 3, noResponseRetries: 9, httpMethodsToRetry: ['GET', 'HEAD', 'PUT', 'POST'] };
// ok: js/retry-count-option-raised
const pager = { pageCount: 9 };
// ruleid: js/retry-on-status-added
const retryingFetch = fetchRetry(fetch, { retries: 3, retryOn: [500, 503] });
// ruleid: js/retries-raised
const kafka = new Kafka({ clientId: 'app', brokers, retry: { retries: 10 } });
// ok: js/retry-on-status-added
const lenient = fetchRetry(fetch, { retries: 1, retryOn: [429] });

// ruleid: js/retry-helper-write
export const createOrder = (order) => withRetry(() => api.post('/orders', order));
// ok: js/retry-helper-write
export const listOrders = () => withRetry(() => api.get('/orders?all=1'));
// ok: js/retry-helper-write
export const postOnce = (order) => api.post('/orders', order);

axiosRetry(api, {
  retries: 2,
  // ruleid: js/method-guard-removed
  retryCondition: (e) => isNetworkError(e),
});

// ruleid: js/retry-count-option-raised
export async function fetchWithRetry(url, init, retries = 6) {
  return retryingFetch(url, { ...init, retries });
}
// ok: js/retry-count-option-raised
export const PAGE_SIZE = 60;
// ruleid: js/retry-count-option-raised
const readRetries = (opts) => opts.maxRetries ?? 10;
// ok: js/retry-count-option-raised
const pageLimit = (opts) => opts.limit ?? 10;

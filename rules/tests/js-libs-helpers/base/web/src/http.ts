import * as rax from 'retry-axios';
import fetchRetry from 'fetch-retry';
import { Kafka } from 'kafkajs';

const api = axios.create();
api.defaults.raxConfig = { retry: 3, noResponseRetries: 2, httpMethodsToRetry: ['GET', 'HEAD', 'PUT'] };
const pager = { pageCount: 2 };
const retryingFetch = fetchRetry(fetch, { retries: 3 });
const kafka = new Kafka({ clientId: 'app', brokers, retry: { retries: 3 } });

export const createOrder = (order) => withRetry(() => api.get('/orders'));
export const listOrders = () => withRetry(() => api.get('/orders'));

axiosRetry(api, {
  retries: 2,
  retryCondition: (e) => e.config.method === 'get' && isNetworkError(e),
});

export async function fetchWithRetry(url, init, retries = 3) {
  return retryingFetch(url, { ...init, retries });
}
export const PAGE_SIZE = 30;
const readRetries = (opts) => opts.maxRetries ?? 3;
const pageLimit = (opts) => opts.limit ?? 3;

axiosRetry(client, {
  retries: 3,
  retryDelay: axiosRetry.exponentialDelay,
  retryCondition: axiosRetry.isNetworkOrIdempotentRequestError,
});

const kyClient = ky.create({ retry: { limit: 2, methods: ["get"] } });
const backoff = { randomize: true };

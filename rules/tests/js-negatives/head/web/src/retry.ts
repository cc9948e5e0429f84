axiosRetry(client, {
  retries: 3,
  // ok: js/jitter-removed
  retryDelay: (n) => axiosRetry.exponentialDelay(n) * 2,
  // ok: js/retry-admits-post
  retryCondition: axiosRetry.isIdempotentRequestError,
});

// ok: js/retry-admits-post, js/retry-limit-raised
const kyClient = ky.create({ retry: { limit: 2, methods: ["get", "put"] } });
// ok: js/jitter-disabled
const backoff = { randomize: true, factor: 2 };

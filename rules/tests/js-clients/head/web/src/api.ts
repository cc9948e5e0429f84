import axios from "axios";
import axiosRetry from "axios-retry";
import got from "got";
import ky from "ky";

// ruleid: js/timeout-lowered
const client = axios.create({ baseURL: "/api", timeout: 800 });
axiosRetry(client, {
  // ruleid: js/retries-raised
  retries: 8,
  // ruleid: js/jitter-removed
  retryDelay: () => 1000,
  // ruleid: js/retry-admits-post
  retryCondition: axiosRetry.isRetryableError,
});

export const orders = got.extend({
  retry: {
    // ruleid: js/retry-limit-raised
    limit: 6,
    // ruleid: js/retry-admits-post
    methods: ["GET", "PUT", "POST"],
  },
});

// ruleid: js/retries-raised
export const kyClient = ky.create({ retry: 5 });

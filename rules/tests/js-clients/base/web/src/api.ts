import axios from "axios";
import axiosRetry from "axios-retry";
import got from "got";
import ky from "ky";

const client = axios.create({ baseURL: "/api", timeout: 2500 });
axiosRetry(client, {
  retries: 2,
  retryDelay: axiosRetry.exponentialDelay,
});

export const orders = got.extend({
  retry: {
    limit: 2,
    methods: ["GET", "PUT"],
  },
});

export const kyClient = ky.create({ retry: 2 });

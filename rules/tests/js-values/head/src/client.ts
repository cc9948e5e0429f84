import axiosRetry from "axios-retry";

// ruleid: js/retries-raised
axiosRetry(api, { retries: parseInt(process.env.HTTP_RETRIES || "10") });
// ok: js/retries-raised
axiosRetry(uploads, { retries: Number(process.env.UPLOAD_RETRIES ?? 3) });
// ruleid: js/retries-raised
const RETRIES = 6;
axiosRetry(search, { retries: RETRIES });

export const send = async (config: AxiosRequestConfig) => {
  client.defaults.raxConfig = {
    retry: 3,
    // ruleid: js/retry-admits-post
    httpMethodsToRetry: [config.method ?? ''],
  };
  other.defaults.raxConfig = {
    retry: 3,
    // ok: js/retry-admits-post
    httpMethodsToRetry: ['GET', 'HEAD', 'PUT'],
  };
};

import axiosRetry from "axios-retry";

axiosRetry(api, { retries: 3 });
axiosRetry(uploads, { retries: 5 });
const RETRIES = 2;
axiosRetry(search, { retries: RETRIES });

export const send = async (config: AxiosRequestConfig) => {
  client.defaults.raxConfig = {
    retry: 3,
  };
  other.defaults.raxConfig = {
    retry: 3,
  };
};

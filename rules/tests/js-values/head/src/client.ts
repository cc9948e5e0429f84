import axiosRetry from "axios-retry";

// ruleid: js/retries-raised
axiosRetry(api, { retries: parseInt(process.env.HTTP_RETRIES || "10") });
// ok: js/retries-raised
axiosRetry(uploads, { retries: Number(process.env.UPLOAD_RETRIES ?? 3) });
// ruleid: js/retries-raised
const RETRIES = 6;
axiosRetry(search, { retries: RETRIES });

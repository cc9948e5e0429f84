const retry = require("async-retry");
const { S3Client } = require("@aws-sdk/client-s3");
const pRetry = require("p-retry");

const s3 = new S3Client({ region: "eu-west-1", maxAttempts: 3 });

async function sync() {
  return retry(async () => upload(), { retries: 3 });
}

async function fetchAll() {
  return pRetry(() => fetchPage(), {
    retries: 2,
    randomize: true,
  });
}

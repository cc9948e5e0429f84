const retry = require("async-retry");
const { S3Client } = require("@aws-sdk/client-s3");
const pRetry = require("p-retry");

// ruleid: js/aws-max-attempts-raised
const s3 = new S3Client({ region: "eu-west-1", maxAttempts: 10 });

async function sync() {
  // ruleid: js/jitter-disabled
  return retry(async () => upload(), { retries: 3, randomize: false });
}

async function fetchAll() {
  return pRetry(() => fetchPage(), {
    // ruleid: js/jitter-removed
    retries: 2,
  });
}

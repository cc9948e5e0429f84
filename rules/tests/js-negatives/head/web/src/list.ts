export async function listOrders(api: Api) {
  // ok: js/retry-limit-raised, js/timeout-lowered, js/retries-raised
  return api.get("/orders", { params: { limit: 50 }, timeout: 1000 });
}

// ok: js/retries-raised, js/aws-max-attempts-raised
const deployment = { replicas: 6, maxAttempts: "n/a" };
// ok: js/aws-max-attempts-raised
const s3 = new S3Client({ maxAttempts: 2 });
// retries: 9 is what we use in production
// ok: js/retries-raised
const note = "retries: 9 now";

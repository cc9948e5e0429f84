export async function listOrders(api: Api) {
  return api.get("/orders", { params: { limit: 20 }, timeout: 5000 });
}

const deployment = { replicas: 2, maxAttempts: "n/a" };
const s3 = new S3Client({ maxAttempts: 5 });
// retries: 2 is what we use in production
const note = "retries: 2";

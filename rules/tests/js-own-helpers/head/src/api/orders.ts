import { appFetch, readFetch, resilient, traced } from "./client";

export function createOrder(order: object) {
  return appFetch("/orders", { method: "POST", body: JSON.stringify(order) });
}

export function listOrders() {
  return readFetch("/orders");
}

export function refresh(api: any) {
  // ruleid: js/retry-helper-write
  return resilient(() => api.post("/refresh", {}));
}

export function track(api: any) {
  // ok: js/retry-helper-write
  return traced(() => api.post("/track", {}));
}

import { appFetch, readFetch, resilient, traced } from "./client";

export function createOrder(order: object) {
  return appFetch("/orders", { method: "POST", body: JSON.stringify(order) });
}

export function listOrders() {
  return readFetch("/orders");
}

export function refresh(api: any) {
  return resilient(() => api.get("/refresh"));
}

export function track(api: any) {
  return traced(() => api.get("/track"));
}

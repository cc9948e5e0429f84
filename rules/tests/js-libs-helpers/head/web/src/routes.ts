export function route(req) {
  // ok: js/method-guard-removed
  return page(req);
}

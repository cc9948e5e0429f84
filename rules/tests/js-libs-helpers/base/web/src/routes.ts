export function route(req) {
  if (req.method !== 'GET') {
    return form(req);
  }
  return page(req);
}

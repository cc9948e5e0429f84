def list_orders(api):
    # ok: python/timeout-lowered, python/retries-raised
    return api.list(limit=50, page_size=100, timeout=3)


def settings():
    # ok: python/retries-raised
    return {"replicas": 6, "workers": 8}

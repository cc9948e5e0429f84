def list_orders(api):
    return api.list(limit=20, page_size=50, timeout=10)


def settings():
    return {"replicas": 2, "workers": 4}

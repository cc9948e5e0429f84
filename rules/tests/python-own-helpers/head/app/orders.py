from app.http import resilient, own_retry, timed, logged, RetryConfig


def load(client, url):
    # ruleid: python/retry-helper-write
    return resilient(lambda: client.post(url, json={"load": True}))


def ping(client, url):
    # ok: python/retry-helper-write
    return resilient(lambda: client.post(url + "/ping"))


# ruleid: python/retry-helper-write
@own_retry(RetryConfig(max_retry=3))
def create(session, order):
    return session.post("/orders", json=order)


# ok: python/retry-helper-write
@timed
def audit(client, url):
    return client.post(url)


def notify(client, url):
    # ok: python/retry-helper-write
    return logged(lambda: client.post(url))

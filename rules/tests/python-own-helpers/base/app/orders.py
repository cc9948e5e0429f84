from app.http import resilient, own_retry, timed, logged


def load(client, url):
    return resilient(lambda: client.get(url))


def ping(client, url):
    return resilient(lambda: client.post(url + "/ping"))


def create(session, order):
    return session.post("/orders", json=order)


def audit(client, url):
    return client.get(url)

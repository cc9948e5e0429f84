import backoff


@backoff.on_exception(backoff.expo, HTTPError, max_tries=3)
def a():
    return get("/a")


@backoff.on_exception(backoff.expo, HTTPError, max_tries=3, jitter=backoff.full_jitter)
def b():
    return get("/b")


@backoff.on_exception(backoff.expo, HTTPError, max_tries=5)
def c():
    return get("/c")

import backoff


# ruleid: python/backoff-limit-removed
@backoff.on_exception(backoff.expo, HTTPError)
def a():
    return get("/a")


# ruleid: python/jitter-disabled
# ok: python/jitter-removed
@backoff.on_exception(backoff.expo, HTTPError, max_tries=3, jitter=None)
def b():
    return get("/b")


# ruleid: python/attempts-raised
@backoff.on_exception(backoff.expo, HTTPError, max_tries=8)
def c():
    return get("/c")

import time


def resilient(fn, times=3):
    for attempt in range(times):
        try:
            return fn()
        except IOError:
            time.sleep(2 ** attempt)
    return fn()


def own_retry(config):
    def wrap(fn):
        def inner(*args, **kwargs):
            for attempt in range(config.max_retry):
                try:
                    return fn(*args, **kwargs)
                except IOError:
                    continue
            return fn(*args, **kwargs)
        return inner
    return wrap


def timed(fn):
    return fn


def logged(fn):
    print("calling", fn)
    return fn()

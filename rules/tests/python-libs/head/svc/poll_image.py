import time


def wait_for_image(client, url):
    attempt = 0
    # ruleid: python/loop-attempts-raised
    max_attempts = 60
    while attempt < max_attempts:
        try:
            return client.get(url)
        except IOError:
            attempt += 1
            time.sleep(5)
    raise TimeoutError(url)


def lockout(user):
    # ok: python/loop-attempts-raised
    max_attempts = 10
    return user.failures >= max_attempts

import time


def wait_for_image(client, url):
    attempt = 0
    max_attempts = 10
    while attempt < max_attempts:
        try:
            return client.get(url)
        except IOError:
            attempt += 1
            time.sleep(5)
    raise TimeoutError(url)


def lockout(user):
    max_attempts = 3
    return user.failures >= max_attempts

def server_delay(error):
    """The wait the server asked for, in seconds."""
    return float(error.response.headers["Retry-After"])


def default_delay(error):
    return 2.0

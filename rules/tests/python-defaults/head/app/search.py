from vectordb import Index


def index(settings):
    options = {
        "name": settings["name"],
        # Another library: its default is not the SDKs' 2.
        # ok: python/sdk-max-retries-raised
        "max_retries": 5,
    }
    return Index(**options)

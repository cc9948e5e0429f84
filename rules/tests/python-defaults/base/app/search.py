from vectordb import Index


def index(settings):
    options = {
        "name": settings["name"],
    }
    return Index(**options)

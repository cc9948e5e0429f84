from langchain_openai import ChatOpenAI


class Chat:
    def __init__(self, settings):
        self.model = settings.get("model")
        self.timeout = settings.get("timeout", 30)
        self.retry_budget = int(settings.get("max_retries", 6))

    def client(self):
        params = {
            "model": self.model,
            # ruleid: python/sdk-max-retries-raised
            "max_retries": self.retry_budget,
            "timeout": self.timeout,
        }
        return ChatOpenAI(**params)

    def quiet_client(self):
        params = {
            "model": self.model,
            # ok: python/sdk-max-retries-raised
            "max_retries": 1,
        }
        return ChatOpenAI(**params)

    def batch_client(self):
        # New code: no default applied here before.
        params = {
            "model": self.model,
            # ok: python/sdk-max-retries-raised
            "max_retries": 4,
        }
        return ChatOpenAI(**params)

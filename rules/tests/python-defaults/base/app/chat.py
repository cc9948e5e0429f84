from langchain_openai import ChatOpenAI


class Chat:
    def __init__(self, settings):
        self.model = settings.get("model")
        self.timeout = settings.get("timeout", 30)

    def client(self):
        params = {
            "model": self.model,
            "timeout": self.timeout,
        }
        return ChatOpenAI(**params)

    def quiet_client(self):
        params = {
            "model": self.model,
        }
        return ChatOpenAI(**params)

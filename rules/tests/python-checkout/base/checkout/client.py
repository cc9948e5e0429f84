from clients import naive_client

client = naive_client(timeout_s=2.5, retries=2, jitter=True)

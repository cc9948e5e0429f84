from botocore.config import Config

QUEUE = Config(retries={"mode": "standard", "max_attempts": 3})
BUCKET = Config(retries={"mode": "legacy"})
LABELS = {"mode": "legacy"}

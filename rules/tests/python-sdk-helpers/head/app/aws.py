from botocore.config import Config

# ruleid: python/botocore-legacy-retry-mode
QUEUE = Config(retries={"mode": "legacy", "max_attempts": 3})
BUCKET = Config(retries={"mode": "legacy"})
# ok: python/botocore-legacy-retry-mode
LABELS = {"mode": "legacy", "kind": "x"}

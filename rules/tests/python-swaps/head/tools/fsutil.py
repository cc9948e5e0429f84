import shutil

from tools.retrying import retry


# Retry every half second for up to 3 seconds
# ok: python/tenacity-stop-removed
@retry(stop_after_delay=3, wait=0.5)
def remove_tree(path):
    shutil.rmtree(path)


# ok: python/tenacity-stop-removed
@retry(max_attempts=4, wait=1)
def copy_tree(src, dst):
    shutil.copytree(src, dst)


# ruleid: python/tenacity-stop-removed
@retry(wait=1)
def move_tree(src, dst):
    shutil.move(src, dst)

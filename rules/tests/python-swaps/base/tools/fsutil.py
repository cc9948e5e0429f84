import shutil

from tenacity import retry, stop_after_attempt, stop_after_delay, wait_fixed


# Retry every half second for up to 3 seconds
@retry(reraise=True, stop=stop_after_delay(3), wait=wait_fixed(0.5))
def remove_tree(path):
    shutil.rmtree(path)


@retry(reraise=True, stop=stop_after_attempt(4), wait=wait_fixed(1))
def copy_tree(src, dst):
    shutil.copytree(src, dst)


@retry(stop=stop_after_attempt(5), wait=wait_fixed(1))
def move_tree(src, dst):
    shutil.move(src, dst)

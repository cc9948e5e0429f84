"""Sends bytes that are not HTTP to the replay server and prints what came back.

The server must answer 400 and keep serving the other clients. Exits 0 when
the answer was a 400.
"""
import os
import socket
import sys
from urllib.parse import urlsplit

target = urlsplit(os.environ["RETRYGATE_URL"])
with socket.create_connection((target.hostname, target.port), timeout=10) as s:
    s.sendall(b"\x16\x03\x01 this is not http \xff\xfe\r\n\r\n")
    answer = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
first = answer.split(b"\r\n", 1)[0].decode("latin-1")
print(first)
sys.exit(0 if " 400 " in first + " " else 1)

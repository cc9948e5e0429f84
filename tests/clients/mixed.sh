#!/bin/sh
# Client 0 sends garbage bytes; every other client is retrygate's reference
# client. $1 is the retrygate binary.
if [ "$RETRYGATE_CLIENT" = 0 ]; then
    exec python3 "$(dirname "$0")/garbage_client.py"
fi
exec "$1" replay-client --profile reference

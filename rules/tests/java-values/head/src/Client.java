class Client {
    private boolean reconnectingAllowed() {
        // ruleid: java/attempt-bound-removed
        return !closing;
    }

    private boolean shouldRetry(int attempts) {
        // ok: java/attempt-bound-removed
        // ruleid: java/retry-loop-bound-widened
        return attempts <= maxAttempts;
    }

    private int pageCount() {
        int pages = 0;
        // ok: java/attempt-bound-removed
        while (true) {
            pages++;
        }
        return pages;
    }
}

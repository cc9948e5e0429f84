class Client {
    private boolean reconnectingAllowed() {
        return !closing && connectionAttempts.get() <= (maxReconnectionAttempts + 1);
    }

    private boolean shouldRetry(int attempts) {
        return attempts < maxAttempts;
    }

    private int pageCount() {
        int pages = 0;
        while (pages < maxPages) {
            pages++;
        }
        return pages;
    }
}

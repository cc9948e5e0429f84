package shop;

class Forms {
    String handle(Request request) {
        // ok: java/method-guard-removed
        return "page";
    }

    // ruleid: java/retry-constant-raised
    public static final int DEFAULT_MAX_AUTO_RETRIES_NEXT_SERVER = 3;
    // ok: java/retry-constant-raised
    public static final int DEFAULT_POOL_SIZE = 50;
    // ruleid: java/retry-constant-raised
    int retryTimes = 5;
    // ruleid: java/attempt-constant-raised
    private static final int DEFAULT_MAX_ATTEMPT_COUNT = 100;
    // ok: java/attempt-constant-raised
    private static final int MAX_ATTEMPTS = 3;
}

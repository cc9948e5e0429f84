package shop;

class Forms {
    String handle(Request request) {
        if (request instanceof HttpEntityEnclosingRequest) {
            return "form";
        }
        return "page";
    }

    public static final int DEFAULT_MAX_AUTO_RETRIES_NEXT_SERVER = 0;
    public static final int DEFAULT_POOL_SIZE = 20;
    int retryTimes = 2;
    private static final int DEFAULT_MAX_ATTEMPT_COUNT = 10;
    private static final int MAX_ATTEMPTS = 5;
}

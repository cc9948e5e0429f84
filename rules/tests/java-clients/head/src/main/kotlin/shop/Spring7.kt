package shop

class Spring7 {
    // ruleid: java/max-retries-raised, java/jitter-removed
    @Retryable(maxRetries = 8, delay = 200)
    fun fetch(): String = api.get()
}

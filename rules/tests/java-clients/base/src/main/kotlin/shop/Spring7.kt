package shop

class Spring7 {
    @Retryable(maxRetries = 3, jitter = 100, delay = 200)
    fun fetch(): String = api.get()
}

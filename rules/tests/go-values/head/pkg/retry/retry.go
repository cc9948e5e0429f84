package retry

// DefaultPolicy is the retry policy of every route that sets none.
func DefaultPolicy() *route.RouteAction_RetryPolicy {
	return &route.RouteAction_RetryPolicy{
		// ruleid: go/mesh-default-retries-added
		NumRetries: &types.UInt32Value{Value: 10},
		RetryOn:    "connect-failure,refused-stream",
	}
}

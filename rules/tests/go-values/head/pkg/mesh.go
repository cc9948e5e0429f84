package pkg

func makeRoute(t string) *v1alpha3.HTTPRoute {
	return &v1alpha3.HTTPRoute{
		Timeout: t,
		// ruleid: go/mesh-retry-policy-added
		Retries: &v1alpha3.HTTPRetry{
			Attempts: 3,
		},
	}
}

func defaultPolicy() *route.RouteAction_RetryPolicy {
	return &route.RouteAction_RetryPolicy{
		// ok: go/mesh-default-retries-added
		NumRetries: &types.UInt32Value{Value: 2},
		// ruleid: go/retry-on-5xx
		RetryOn: "connect-failure,refused-stream,retriable-status-codes",
	}
}

func longPolicy() *route.RouteAction_RetryPolicy {
	return &route.RouteAction_RetryPolicy{
		// ruleid: go/retry-on-5xx
		RetryOn: "connect-failure,refused-stream,unavailable,cancelled,resource-exhausted,retriable-status-codes",
	}
}

func explicit(r *v1alpha3.HTTPRoute) {
	// ok: go/mesh-retry-policy-added
	r.Retries = &v1alpha3.HTTPRetry{Attempts: 2}
}

package pkg

func makeRoute(t string) *v1alpha3.HTTPRoute {
	return &v1alpha3.HTTPRoute{
		Timeout: t,
	}
}

func defaultPolicy() *route.RouteAction_RetryPolicy {
	return &route.RouteAction_RetryPolicy{
		NumRetries: &types.UInt32Value{Value: 2},
		RetryOn:    "connect-failure,refused-stream",
	}
}

func longPolicy() *route.RouteAction_RetryPolicy {
	return &route.RouteAction_RetryPolicy{
		RetryOn: "connect-failure,refused-stream,unavailable,cancelled,resource-exhausted",
	}
}

func explicit(r *v1alpha3.HTTPRoute) {
	r.Retries = &v1alpha3.HTTPRetry{Attempts: 2}
}

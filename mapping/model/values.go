package model

// BalanceAlgorithms returns the accepted values of Backend.Balance (and of the settings' default
// algorithms): the HAProxy algorithms that accept servers added at runtime.
func BalanceAlgorithms() []string { return []string{"roundrobin", "leastconn", "source", "random"} }

// ForwardedPolicies returns the accepted values of Backend.ForwardedHeaders (and of the settings'
// default): how HAProxy sets the Forwarded and X-Forwarded-* headers.
func ForwardedPolicies() []string { return []string{"append", "replace", "never", "if-none"} }

package model

import "strconv"

// BalanceAlgorithms returns the accepted values of Backend.Balance (and of the settings' default
// algorithms): the HAProxy algorithms that accept servers added at runtime.
func BalanceAlgorithms() []string { return []string{"roundrobin", "leastconn", "source", "random"} }

// ForwardedPolicies returns the accepted values of Backend.ForwardedHeaders (and of the settings'
// default): how HAProxy sets the Forwarded and X-Forwarded-* headers.
func ForwardedPolicies() []string { return []string{"append", "replace", "never", "if-none"} }

// TimeoutMillis returns an HAProxy duration with an explicit unit (us, ms, s, m, h or d, as
// Backend.TimeoutServer holds it) in milliseconds, rounded up as HAProxy rounds microseconds.
func TimeoutMillis(v string) (int64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if i == 0 || err != nil {
		return 0, false
	}
	perMS := map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
	switch unit := v[i:]; {
	case unit == "us":
		return (n + 999) / 1000, true
	case perMS[unit] > 0:
		if n > (1<<31-1)/perMS[unit] {
			return 0, false
		}
		return n * perMS[unit], true
	}
	return 0, false
}

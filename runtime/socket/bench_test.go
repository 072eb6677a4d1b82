package socket_test

import (
	"context"
	"testing"

	"github.com/haroute/haroute/runtime/socket"
)

// BenchmarkSetServerWeight measures `set server … weight` against a real HAProxy 2.6 through one
// interactive Session and through one connection per command (Admin). Report commands per second:
//
//	go test ./runtime/socket -run '^$' -bench SetServerWeight
func BenchmarkSetServerWeight(b *testing.B) {
	bed := startBed(b)
	ctx := context.Background()
	run := func(b *testing.B, r socket.Runner) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := socket.SetServerWeight(ctx, r, "be_http", "s1", 1+i%200); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
	}
	b.Run("session", func(b *testing.B) {
		s, err := bed.admin.Session(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
	})
	b.Run("per-command", func(b *testing.B) { run(b, bed.admin) })
	// The weights were applied: HAProxy shows one of them.
	states, err := socket.ShowServersState(ctx, bed.admin, "be_http")
	if err != nil || len(states) != 1 || states[0].UserWeight < 1 || states[0].UserWeight > 200 {
		b.Fatalf("show servers state = %+v, %v; want s1 with a weight the benchmark set", states, err)
	}
}

package testkit

import (
	"net"
	"net/netip"
	"sync"
	"testing"
)

// ServeConns accepts the connections of l until l is closed and hands each to handle on a
// goroutine of its own, which must close it. On t's cleanup it closes l and waits for the handlers.
// It returns l's address.
func ServeConns(t testing.TB, l net.Listener, handle func(net.Conn)) netip.AddrPort {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).AddrPort()
}

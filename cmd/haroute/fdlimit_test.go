package main

import "testing"

func TestFittedMaxConn(t *testing.T) {
	for _, c := range []struct {
		maxconn int
		limit   uint64
		want    int
		fits    bool
	}{
		{50000, 1 << 20, 50000, true},
		{50000, 101000, 50000, true},
		{50000, 20000, 4750, false},
		{50000, 1024, 6, false},
		{50000, 500, 0, false},
	} {
		got, fits := fittedMaxConn(c.maxconn, c.limit)
		if got != c.want || fits != c.fits {
			t.Errorf("fittedMaxConn(%d, %d) = %d, %v; want %d, %v", c.maxconn, c.limit, got, fits, c.want, c.fits)
		}
	}
}

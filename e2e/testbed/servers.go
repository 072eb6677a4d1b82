package testbed

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/haroute/haroute/runtime/socket"
)

const serversTimeout = 5 * time.Second

// ActiveServers returns "addr:port" of every server that is not in maintenance, over all backends
// of the HAProxy behind admin, sorted. Servers on unix sockets (be_sni, be_no_sni) are left out.
func ActiveServers(admin *socket.Admin) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), serversTimeout)
	defer cancel()
	states, err := socket.ShowServersState(ctx, admin, "")
	if err != nil {
		return nil, fmt.Errorf("show servers state: %w", err)
	}
	// Administrative maintenance: forced, inherited, resolution, or set by configuration.
	const maint = 0x01 | 0x02 | 0x04 | 0x20
	var out []string
	for _, s := range states {
		if s.AdminState&maint == 0 && s.Addr != "-" {
			out = append(out, s.Addr+":"+strconv.Itoa(s.Port))
		}
	}
	sort.Strings(out)
	return out, nil
}

package observe

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// Admin-state bits of `show servers state` (srv_admin_state).
const (
	adminFMaint = 0x01
	adminIMaint = 0x02
	adminCMaint = 0x04
	adminFDrain = 0x08
	adminIDrain = 0x10
	adminRMaint = 0x20
)

// stateOf maps an admin-state bitmask to the model's server state: any maintenance bit is maint,
// else any drain bit is drain, else ready.
func stateOf(admin int) model.ServerState {
	switch {
	case admin&(adminFMaint|adminIMaint|adminCMaint|adminRMaint) != 0:
		return model.StateMaint
	case admin&(adminFDrain|adminIDrain) != 0:
		return model.StateDrain
	}
	return model.StateReady
}

// observeServers replaces the servers of every backend of obs with the live ones.
func observeServers(ctx context.Context, r socket.Runner, obs *model.Config) error {
	known, err := showBackends(ctx, r)
	if err != nil {
		return err
	}
	var missing []string
	for _, b := range obs.Backends {
		if !known[b.Name] {
			missing = append(missing, b.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: HAProxy has no backend %s", ErrStructuralDrift, strings.Join(missing, ", "))
	}
	states, err := socket.ShowServersState(ctx, r, "")
	if err != nil {
		return fmt.Errorf("show servers state: %w", err)
	}
	live := map[string][]model.Server{}
	for _, s := range states {
		live[s.Backend] = append(live[s.Backend], model.Server{
			Name:   s.Server,
			ID:     int32(s.ServerID),
			Addr:   s.Addr,
			Port:   int32(s.Port),
			Weight: int32(s.UserWeight),
			State:  stateOf(s.AdminState),
			// Every server haroute renders or adds configures a check: whether it runs is what
			// the applied state says (model.Server.HealthCheck).
			HealthCheck: s.CheckState&socket.CheckEnabled != 0,
		})
	}
	for i := range obs.Backends {
		b := obs.Backends[i]
		applied := map[string]model.Server{}
		for _, s := range b.Servers {
			applied[s.Name] = s
		}
		servers := live[b.Name]
		for j := range servers {
			if a, ok := applied[servers[j].Name]; ok {
				servers[j].Service = a.Service
				servers[j].VerifyHost = a.VerifyHost
			}
		}
		slices.SortStableFunc(servers, func(x, y model.Server) int { return cmp.Compare(x.Name, y.Name) })
		b.Servers = servers
	}
	return nil
}

// showBackends returns the names of HAProxy's backends (`show backend`).
func showBackends(ctx context.Context, r socket.Runner) (map[string]bool, error) {
	const cmd = "show backend"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	names, err := parseBackends(reply)
	if err != nil {
		return nil, &socket.CommandError{Command: cmd, Reply: reply, Err: fmt.Errorf("%w: %v", socket.ErrUnexpectedReply, err)}
	}
	return names, nil
}

// parseBackends parses the reply of `show backend`: "# name" and one backend name per line.
func parseBackends(reply string) (map[string]bool, error) {
	lines := strings.Split(strings.TrimRight(reply, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "# name" {
		return nil, fmt.Errorf("no \"# name\" header")
	}
	names := map[string]bool{}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if strings.ContainsAny(l, " \t") {
			return nil, fmt.Errorf("malformed backend line %q", l)
		}
		names[l] = true
	}
	return names, nil
}

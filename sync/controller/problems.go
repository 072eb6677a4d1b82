package controller

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping"
)

// routeProblems is what one Route's Problems were at the last sync, to log only what changes.
type routeProblems struct {
	rejected bool
	// text is the sorted problems, for comparison.
	text string
}

// problemLog remembers the Problems of every Route between syncs.
type problemLog map[string]routeProblems

// update logs the Routes whose problems changed since the last call, one line per problem: a
// rejection (warn, with OpenShift's reason and the message, as `haroute render` prints them), a
// warning for an admitted Route (refused endpoint addresses, ...), and "route admitted" for a Route
// that was rejected and is no longer. Routes without problems that never had any are not logged;
// Routes that are gone are forgotten silently.
func (pl problemLog) update(log *slog.Logger, problems []mapping.Problem) {
	byRoute := map[string][]mapping.Problem{}
	for _, p := range problems {
		id := p.Namespace + "/" + p.Name
		byRoute[id] = append(byRoute[id], p)
	}
	ids := make([]string, 0, len(byRoute)+len(pl))
	for id := range byRoute {
		ids = append(ids, id)
	}
	for id := range pl {
		if _, ok := byRoute[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		ps := byRoute[id]
		now := summarize(ps)
		before, known := pl[id]
		switch {
		case known && before == now:
			continue
		case len(ps) == 0:
			if before.rejected {
				log.Info("route admitted", "route", id)
			}
			delete(pl, id)
			continue
		}
		pl[id] = now
		for _, p := range ps {
			msg := "route rejected"
			if p.Warning {
				msg = "route warning"
			}
			log.Warn(msg, "route", id, "reason", p.Reason, "message", p.Message)
		}
		if before.rejected && !now.rejected {
			log.Info("route admitted", "route", id)
		}
	}
}

// summarize reduces one Route's problems to what update compares.
func summarize(ps []mapping.Problem) routeProblems {
	var out routeProblems
	lines := make([]string, 0, len(ps))
	for _, p := range ps {
		out.rejected = out.rejected || !p.Warning
		lines = append(lines, p.String())
	}
	slices.Sort(lines)
	out.text = strings.Join(lines, "\n")
	return out
}

package main

import (
	"log/slog"
	"syscall"
)

// fdPerConnection is what HAProxy reserves per allowed connection (a client and a server side), plus a
// margin for listeners, checks and sockets; it refuses to start when the limit cannot be raised that far.
const (
	fdPerConnection = 2
	fdMargin        = 1000
)

// minFittedMaxConn is the smallest maxconn fitMaxConn lowers the default to; below it the limit is
// too low to serve and only the warning is left.
const minFittedMaxConn = 1000

// fitMaxConn returns the maxconn HAProxy gets: the default (50000, when ROUTER_MAX_CONNECTIONS is not
// set: adjustable) lowered, with one warning, to what this process's file-descriptor hard limit allows,
// so that HAProxy starts instead of restarting forever on "Cannot raise FD limit". A managed HAProxy
// runs under this very limit. In sidecar mode (and for --once, the init step) HAProxy runs in another
// container of the same pod, which the container runtime gives the same limits; the warning says that
// this is assumed. A value the user set is kept and only warned about.
func fitMaxConn(log *slog.Logger, maxconn int, adjustable, sidecar bool) int {
	var lim syscall.Rlimit
	if maxconn <= 0 || syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return maxconn
	}
	fitted, fits := fittedMaxConn(maxconn, lim.Max)
	if fits {
		return maxconn
	}
	if !adjustable || fitted < minFittedMaxConn {
		warnFDLimit(log, maxconn)
		return maxconn
	}
	msg := "HAProxy's maxconn is lowered to fit this machine's file-descriptor limit; set ROUTER_MAX_CONNECTIONS to choose it, or raise the limit (ulimit -n) for the default"
	if sidecar {
		msg = "HAProxy's maxconn is lowered to fit the file-descriptor limit of this container, which HAProxy's container in the same pod shares; set ROUTER_MAX_CONNECTIONS to choose it (auto: HAProxy sizes itself from its own limit)"
	}
	log.Warn(msg, "maxconn", fitted, "default", maxconn, "fd_hard_limit", lim.Max, "fd_left_for_servers", lim.Max-uint64(fitted)*fdPerConnection)
	return fitted
}

// fittedMaxConn reports whether maxconn fits a hard limit of limit descriptors, and if not the maxconn
// that leaves half of them to connections: the other half goes to the health-checked servers (one
// each) and the listeners, whose number is not known before the first snapshot.
func fittedMaxConn(maxconn int, limit uint64) (int, bool) {
	if limit >= uint64(maxconn)*fdPerConnection+fdMargin {
		return maxconn, true
	}
	if limit <= fdMargin {
		return 0, false
	}
	return int((limit - fdMargin) / (2 * fdPerConnection)), false
}

// warnFDLimit warns when this machine's file-descriptor hard limit is too low for maxconn: HAProxy
// would then stop at start-up with "Cannot raise FD limit". It only warns: the config may be meant for
// another machine (a pod usually has a far higher limit).
func warnFDLimit(log *slog.Logger, maxconn int) {
	if maxconn <= 0 {
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	need := uint64(maxconn)*fdPerConnection + fdMargin
	if lim.Max < need {
		log.Warn("HAProxy will not start on this machine with this maxconn: its file-descriptor limit is too low; set ROUTER_MAX_CONNECTIONS=auto (HAProxy sizes itself) or a smaller number",
			"maxconn", maxconn, "fd_needed", need, "fd_hard_limit", lim.Max)
	}
}

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

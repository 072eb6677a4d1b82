package supervise

import (
	"regexp"
	"strings"
	"sync"
)

// Failure is why HAProxy does not start, in words a user can act on.
type Failure struct {
	// Cause names what is wrong; Fix says what to change; Alert is HAProxy's own first alert of the
	// failed start ("" when it printed none).
	Cause, Fix, Alert string
}

// maxAlerts bounds the alert lines kept per process.
const maxAlerts = 8

// alerts keeps the [ALERT] lines of one process (without HAProxy's "[ALERT] (pid) : " prefix).
type alerts struct {
	mu    sync.Mutex
	lines []string
}

func (a *alerts) add(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.lines) < maxAlerts {
		a.lines = append(a.lines, alertText(line))
	}
}

func (a *alerts) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.lines...)
}

// alertPrefix matches HAProxy's "[ALERT]    (12345) : " (the PID changes at every attempt).
var alertPrefix = regexp.MustCompile(`^\[ALERT\]\s*\(\d+\)\s*:\s*`)

// alertText returns an alert line without its level and PID, so that the same alert of two attempts
// compares equal.
func alertText(line string) string { return alertPrefix.ReplaceAllString(strings.TrimSpace(line), "") }

// causes are the start-up failures HAProxy reports and what fixes them, matched on HAProxy's alert
// text (the same on 2.6 to 3.4), the first match winning.
var causes = []struct {
	match []string
	cause string
	fix   string
}{
	{[]string{"Cannot raise FD limit"},
		"the file-descriptor limit is lower than HAProxy needs for maxconn (two per connection) and one per health-checked server",
		"set ROUTER_MAX_CONNECTIONS to a smaller number, or raise the limit (ulimit -n; LimitNOFILE; the container runtime's nofile)"},
	{[]string{"Address already in use"},
		"a port HAProxy binds is already in use",
		"stop what uses it, or choose other ports (ROUTER_SERVICE_HTTP_PORT, ROUTER_SERVICE_HTTPS_PORT, --http-port, --https-port)"},
	{[]string{"cannot bind", "permission denied"},
		"HAProxy may not bind a port below 1024",
		"give it CAP_NET_BIND_SERVICE (or run as root), or use ports above 1023 (ROUTER_SERVICE_HTTP_PORT, ROUTER_SERVICE_HTTPS_PORT)"},
	{[]string{"Cannot assign requested address"},
		"an address HAProxy binds does not exist on this machine",
		"check ROUTER_BIND_ADDRESS (or --bind-address)"},
	{[]string{"unable to load SSL"},
		"a certificate cannot be loaded",
		"check the default certificate (DEFAULT_CERTIFICATE_PATH) and the files under certs/; HAProxy's alert names the file"},
	{[]string{"unable to stat SSL certificate"},
		"a certificate file is missing",
		"check the default certificate (DEFAULT_CERTIFICATE_PATH); HAProxy's alert names the file"},
	{[]string{"config :"},
		"HAProxy refuses the configuration",
		"a custom template (TEMPLATE_FILE) is the usual cause: the alert names the file and line; haroute render and haproxy -c reproduce it"},
}

// diagnose names the cause of a failed start from HAProxy's alerts, or, without a known alert, from
// the start error.
func diagnose(alerts []string, startErr error) Failure {
	for _, c := range causes {
		for _, a := range alerts {
			if containsAll(a, c.match) {
				// The first alert is the one that names the file and line; later ones summarise.
				return Failure{Cause: c.cause, Fix: c.fix, Alert: alerts[0]}
			}
		}
	}
	f := Failure{Cause: "HAProxy exits or does not answer at start", Fix: "HAProxy's alert says why"}
	if len(alerts) > 0 {
		f.Alert = alerts[0]
	}
	if startErr != nil {
		switch msg := startErr.Error(); {
		case strings.Contains(msg, "no such file") || strings.Contains(msg, "permission denied") && strings.Contains(msg, "starting "):
			f.Cause, f.Fix = "the HAProxy binary cannot be run: "+msg, "check --managed-haproxy (the path of haproxy) and its permissions"
		case f.Alert == "":
			f.Cause = "HAProxy does not start: " + msg
		}
	}
	return f
}

// containsAll reports whether s contains every one of subs, ignoring case.
func containsAll(s string, subs []string) bool {
	s = strings.ToLower(s)
	for _, sub := range subs {
		if !strings.Contains(s, strings.ToLower(sub)) {
			return false
		}
	}
	return true
}

// stillFailingEvery is how often a start failing again for the same cause is logged above debug.
const stillFailingEvery = 10

// Failure returns why the last starts failed, false once a start succeeded (or before any failed).
func (s *Supervisor) Failure() (Failure, bool) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if s.failure == nil {
		return Failure{}, false
	}
	return *s.failure, true
}

// startFailed records a failed start (p nil when the process could not even be started) and logs it:
// as an error naming the cause and the fix the first time, then, while the cause stays the same, at
// debug, with a reminder every stillFailingEvery attempts.
func (s *Supervisor) startFailed(p *process, err error, attempt int) {
	var lines []string
	pid := 0
	if p != nil {
		lines, pid = p.alerts.all(), p.pid
	}
	f := diagnose(lines, err)
	s.failMu.Lock()
	same := s.failure != nil && s.failure.Cause == f.Cause
	if same {
		s.failStreak++
	} else {
		s.failStreak = 1
	}
	s.failure, s.failAlerts = &f, lines
	streak := s.failStreak
	s.failMu.Unlock()
	attrs := []any{"attempt", attempt, "pid", pid, "err", err, "cause", f.Cause, "fix", f.Fix}
	if f.Alert != "" {
		attrs = append(attrs, "alert", f.Alert)
	}
	switch {
	case !same:
		s.log.Error(msgStartFailed, attrs...)
	case streak%stillFailingEvery == 0:
		s.log.Warn(msgStillFailing, append(attrs, "failedStarts", streak)...)
	default:
		s.log.Debug(msgStartFailed, attrs...)
	}
}

// startSucceeded forgets the failure of earlier starts, saying so when there was one.
func (s *Supervisor) startSucceeded() {
	s.failMu.Lock()
	failed, streak := s.failure, s.failStreak
	s.failure, s.failStreak, s.failAlerts = nil, 0, nil
	s.failMu.Unlock()
	if failed != nil {
		s.log.Info("haproxy starts again", "failedStarts", streak, "lastCause", failed.Cause)
	}
}

// repeating reports whether the last starts failed more than once for the same cause.
func (s *Supervisor) repeating() bool {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failStreak > 1
}

// quietAlerts returns the alerts the last failed start reported, to be logged at debug if the next
// start repeats them.
func (s *Supervisor) quietAlerts() map[string]bool {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	quiet := make(map[string]bool, len(s.failAlerts))
	for _, a := range s.failAlerts {
		quiet[a] = true
	}
	return quiet
}

// workerKilledAlert is the master's alert for a worker that a SIGKILL or SIGTERM from outside ended
// ("Current worker (123) exited with code 137 (Killed)"; 143 is "(Terminated)").
var workerKilledAlert = regexp.MustCompile(`^Current worker \(\d+\) exited with code (137|143)\b`)

// killedWorker reports alerts that only say a worker was killed (and that the master then stops
// everything, "exit-on-failure"): the worker had started, something killed it. Such an exit within
// the start-up window is not a failed start; the supervisor restarts HAProxy as after any exit.
func killedWorker(alerts []string) bool {
	killed := false
	for _, a := range alerts {
		switch {
		case workerKilledAlert.MatchString(a):
			killed = true
		case strings.Contains(a, "exit-on-failure"):
		default:
			return false
		}
	}
	return killed
}

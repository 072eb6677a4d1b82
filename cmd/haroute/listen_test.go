package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/internal/testkit"
)

func TestStatsHosts(t *testing.T) {
	pod4, pod6 := netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::3")
	cases := []struct {
		rc   runConfig
		want []string
	}{
		{runConfig{}, []string{""}},
		{runConfig{statsAddress: "10.9.9.9", podIPs: []netip.Addr{pod4}}, []string{"10.9.9.9"}},
		{runConfig{podIPs: []netip.Addr{pod4}}, []string{"10.1.2.3", "127.0.0.1"}},
		{runConfig{podIPs: []netip.Addr{pod4, pod6}}, []string{"10.1.2.3", "fd00::3", "127.0.0.1", "::1"}},
		{runConfig{podIPs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}, []string{"127.0.0.1"}},
	}
	for _, c := range cases {
		if got := statsHosts(c.rc); !slices.Equal(got, c.want) {
			t.Errorf("statsHosts(%+v) = %q, want %q", c.rc, got, c.want)
		}
	}
	if got := podAddresses(" 10.1.2.3, ::ffff:10.1.2.4,bad,fe80::1%eth0"); !slices.Equal(got, []netip.Addr{pod4, netip.MustParseAddr("10.1.2.4")}) {
		t.Errorf("podAddresses = %v", got)
	}
}

// TestStatsListenerBindsPodAddresses: with the pod's addresses known, the stats port answers on them
// and on loopback, and not on another address of the machine.
func TestStatsListenerBindsPodAddresses(t *testing.T) {
	port := testkit.FreePort(t)
	rc := runConfig{statsPort: port, podIPs: []netip.Addr{netip.MustParseAddr("127.0.0.77")}}
	lns, err := listenStats(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(lns)
	dial := func(host string) error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, h := range []string{"127.0.0.77", "127.0.0.1"} {
		if err := dial(h); err != nil {
			t.Errorf("stats port on %s: %v", h, err)
		}
	}
	if err := dial("127.0.0.78"); err == nil {
		t.Error("the stats port answers on an address that is not the pod's")
	}
}

// TestStatsCredentials: STATS_USERNAME_FILE and STATS_PASSWORD_FILE (the operator's Secret) win over
// STATS_USERNAME and STATS_PASSWORD; one final line break is dropped; a bad file is an error naming
// the variable and the path, and is not read when the stats port is not served.
func TestStatsCredentials(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user, pass, crlf, twoLines, empty := file("user", "admin\n"), file("pass", "s3cret"), file("crlf", "pw\r\n"), file("two", "pw\n\n"), file("empty", "\n")
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name               string
		env                map[string]string
		serve              bool
		wantUser, wantPass string
		// errs are what the error must name; none: no error.
		errs []string
	}{
		{name: "plain", env: map[string]string{"STATS_USERNAME": "u", "STATS_PASSWORD": "p"}, serve: true, wantUser: "u", wantPass: "p"},
		{name: "files", env: map[string]string{envStatsUserFile: user, envStatsPasswordFile: pass}, serve: true, wantUser: "admin", wantPass: "s3cret"},
		{name: "files win", env: map[string]string{envStatsUserFile: user, envStatsPasswordFile: pass, "STATS_USERNAME": "u", "STATS_PASSWORD": "p"}, serve: true, wantUser: "admin", wantPass: "s3cret"},
		{name: "CRLF", env: map[string]string{envStatsUserFile: user, envStatsPasswordFile: crlf}, serve: true, wantUser: "admin", wantPass: "pw"},
		{name: "one line break only", env: map[string]string{envStatsUserFile: user, envStatsPasswordFile: twoLines}, serve: true, wantUser: "admin", wantPass: "pw\n"},
		{name: "one file", env: map[string]string{envStatsUserFile: user, "STATS_PASSWORD": "p"}, serve: true, errs: []string{envStatsUserFile + " and " + envStatsPasswordFile}},
		{name: "missing file", env: map[string]string{envStatsUserFile: missing, envStatsPasswordFile: pass}, serve: true, errs: []string{envStatsUserFile + ": open " + missing}},
		{name: "empty files", env: map[string]string{envStatsUserFile: empty, envStatsPasswordFile: empty}, serve: true, errs: []string{envStatsUserFile + "=" + empty, envStatsPasswordFile + "=" + empty}},
		{name: "a directory", env: map[string]string{envStatsUserFile: user, envStatsPasswordFile: dir}, serve: true, errs: []string{envStatsPasswordFile + ": read " + dir}},
		{name: "no stats port", env: map[string]string{envStatsUserFile: missing, envStatsPasswordFile: missing}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &app{getenv: func(k string) string { return c.env[k] }, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			u, p, err := a.statsCredentials(c.serve)
			if len(c.errs) == 0 {
				if err != nil || u != c.wantUser || p != c.wantPass {
					t.Errorf("got %q, %q, %v; want %q, %q", u, p, err, c.wantUser, c.wantPass)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %q, %q; want an error naming %q", u, p, c.errs)
			}
			for _, want := range c.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one naming %q", err, want)
				}
			}
		})
	}
}

// TestTLSSniffer: a client that sends nothing holds up no other connection, and plain HTTP and TLS
// are told apart on one port.
func TestTLSSniffer(t *testing.T) {
	ca := testkit.NewCA(t, "sniffer-ca")
	certPEM, keyPEM := ca.Issue(t, "127.0.0.1")
	kp := testkit.KeyPair(t, certPEM, keyPEM)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newTLSSniffer(inner, &tls.Config{Certificates: []tls.Certificate{kp}}, 5*time.Second)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			_, _ = io.WriteString(w, "tls")
			return
		}
		_, _ = io.WriteString(w, "plain")
	})}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("the server: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	}()

	silent, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	addr := ln.Addr().String()
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, DisableKeepAlives: true}}
	for scheme, want := range map[string]string{"http": "plain", "https": "tls"} {
		resp, err := client.Get(scheme + "://" + addr + "/")
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("%s: %q, want %q", scheme, b, want)
		}
	}
	// Not HTTP and not TLS: answered as plain HTTP (400), as OpenShift's router's plain side answers.
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, "\x00garbage\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "400") {
		t.Errorf("garbage: %q, %v; want a 400", line, err)
	}
	// Closing the listener closes the connection still waited on.
	_ = srv.Close()
	_ = silent.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the silent connection after Close: %v, want EOF", err)
	}
}

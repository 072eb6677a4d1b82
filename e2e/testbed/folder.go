package testbed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
)

// LoopbackFlag admits the test bed's loopback backends as endpoints (folder mode only).
const LoopbackFlag = "--allow-loopback-endpoints"

// folderMaxConnections is ROUTER_MAX_CONNECTIONS of every haroute on a Folder: HAProxy's default
// would size it for far more connections than a test makes.
const folderMaxConnections = "ROUTER_MAX_CONNECTIONS=2000"

// FolderConfig is what every haroute started on a Folder shares: the binary, the suite's bounds and
// how its processes are owned (FolderOpts.MayExit sets ProcessOptions.MustOutlive per process).
type FolderConfig struct {
	// Binary runs haroute (BuildHaroute's).
	Binary string
	// Bounds bound every wait of the processes.
	Bounds RouterProcessBounds
	// Process says how a process is stopped and its output logged.
	Process testkit.ProcessOptions
}

// Folder is the bed of the folder-mode suites: a manifest folder `haroute run --manifests` watches
// and the HAProxy directory it writes, both under a short temporary directory (unix socket paths are
// short). Every haroute started on a Folder shares them, so a restarted haroute finds what the one
// before it left.
type Folder struct {
	// Manifests is the watched folder; HAProxyDir the HAProxy directory (--haproxy-dir).
	Manifests, HAProxyDir string
	// Binary runs haroute; a test may replace it (e.g. by a wrapper that changes the mount
	// namespace) before it starts a process.
	Binary string

	t   testing.TB
	cfg FolderConfig
}

// FolderOpts say how one haroute process on a Folder is owned.
type FolderOpts struct {
	// MayExit: the test kills or stops this haroute itself (no failure when it exited before the
	// cleanup, and no check that the HAProxy master it started is gone).
	MayExit bool
	// Env are extra environment variables (NAME=value).
	Env []string
}

// NewFolder makes a Folder and writes files (name → content) into its manifest folder.
func NewFolder(t testing.TB, cfg FolderConfig, files map[string]string) *Folder {
	t.Helper()
	root := testkit.TempDir(t)
	f := &Folder{
		Manifests: filepath.Join(root, "m"), HAProxyDir: filepath.Join(root, "h"),
		Binary: cfg.Binary, t: t, cfg: cfg,
	}
	if err := os.MkdirAll(f.Manifests, 0o755); err != nil {
		t.Fatalf("manifest folder: %v", err)
	}
	for name, data := range files {
		f.Write(name, data)
	}
	return f
}

// Write replaces a manifest file atomically (the watcher never sees half a file): the data goes to
// a hidden temporary file first, which the folder source ignores.
func (f *Folder) Write(name, data string) {
	f.t.Helper()
	path := filepath.Join(f.Manifests, name)
	tmp := filepath.Join(f.Manifests, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		f.t.Fatalf("write %s: %v", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.t.Fatalf("write %s: %v", name, err)
	}
}

// Remove deletes a manifest file.
func (f *Folder) Remove(name string) {
	f.t.Helper()
	if err := os.Remove(filepath.Join(f.Manifests, name)); err != nil {
		f.t.Fatalf("remove %s: %v", name, err)
	}
}

// Process prepares a haroute process on the Folder; with like, it takes like's ports and client (a
// restart: HAProxy's configuration names the ports).
func (f *Folder) Process(o FolderOpts, like *RouterProcess) *RouterProcess {
	f.t.Helper()
	opts := f.cfg.Process
	opts.MustOutlive = !o.MayExit
	p := NewRouterProcess(f.t, RouterProcessConfig{
		Binary:  f.Binary,
		Dir:     f.HAProxyDir,
		Source:  []string{"--manifests", f.Manifests},
		Env:     []string{folderMaxConnections},
		Bounds:  f.cfg.Bounds,
		Process: opts,
	})
	if like != nil {
		p.HTTPPort, p.HTTPSPort, p.StatsPort, p.Client = like.HTTPPort, like.HTTPSPort, like.StatsPort, like.Client
	}
	return p
}

// StartManaged runs `haroute run --managed-haproxy` on the Folder and waits until it is ready; unless
// the test kills haroute itself (which then checks for orphans: the kernel's check counts a zombie
// not yet reaped by init as running), the cleanup checks that the HAProxy master it started is gone
// once haroute has stopped.
func (f *Folder) StartManaged(o FolderOpts, like *RouterProcess, extra ...string) *RouterProcess {
	f.t.Helper()
	p := f.Process(o, like)
	p.Start(append([]string{ManagedHAProxyFlag(), LoopbackFlag}, extra...), o.Env...)
	if !o.MayExit {
		p.MustStopWith(p.ShowProc().Master.PID)
	}
	return p
}

// SidecarFlags are the flags of a sidecar haroute: loopback endpoints, and the HAProxy binary under
// test for `haproxy -c` (a sidecar has no managed binary to check with).
func SidecarFlags() []string {
	return []string{LoopbackFlag, "--check-binary", testkit.HAProxyBinary()}
}

// StartSidecar runs the sidecar shape: `haroute run --once` writes the first configuration, the test
// starts HAProxy on it (as HAProxy's own container would), then haroute runs beside it.
func (f *Folder) StartSidecar(o FolderOpts, extra ...string) (*RouterProcess, *HAProxy) {
	f.t.Helper()
	p := f.Process(o, nil)
	p.RunOnce(append(SidecarFlags(), extra...), o.Env...)
	h := Start(f.t, f.HAProxyDir)
	p.Start(append(SidecarFlags(), extra...), o.Env...)
	return p, h
}

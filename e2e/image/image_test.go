//go:build e2e

package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/haroute/haroute/runtime/reload"
)

const (
	// user is the uid and gid the Dockerfile runs haroute as.
	user = 65532
	// binary is the file `make image-binary` builds and the Dockerfile copies, relative to the
	// repository's root.
	binary = "bin/haroute-static"
	// inImage is where the Dockerfile puts it: on the image's PATH (pathEnv), so that `kubectl exec
	// … -- haroute state` finds it.
	inImage = "/usr/local/bin/haroute"
	pathEnv = "PATH=/usr/local/bin"
	// example is the manifest file `run --once` reads: a Route with its Service and EndpointSlice.
	example = "examples/01-http.yaml"
	// layerOverhead bounds what the image's one layer adds to the binary: a tar header and padding.
	layerOverhead = 64 << 10

	buildTimeout   = 2 * time.Minute
	commandTimeout = time.Minute
)

// ociRuntime is the runtime podman starts the containers with. Debian bookworm's podman prefers
// crun 1.8, which refuses to start anything on a hybrid cgroup layout (cgroup v1 controllers, plus a
// cgroup2 mount that has a controller of its own) with "cgroups in hybrid mode not supported, drop
// all controllers from cgroupv2"; the CI machines have that layout. runc runs on v1, hybrid and v2.
const ociRuntime = "runc"

// limits are the containers' resource limits. As root, podman asks the runtime for a nofile limit of
// 1048576 (and, once nofile is given, for as many processes), above the hard limits of a process
// without CAP_SYS_RESOURCE, such as a CI runner that is itself in a container; the runtime then fails
// with "error setting rlimits ... operation not permitted". Podman also lowers its own nproc limit to
// 32768, so the machine's hard limit is no safe choice either. These values are below any machine's
// limits and enough for haroute, which in these runs starts no HAProxy.
var limits = []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}

// lockedDown are the flags every container runs with: the way a pod runs the image, and stricter.
var lockedDown = []string{"--rm", "--network=none", "--read-only", "--cap-drop=ALL", "--security-opt=no-new-privileges"}

// imageInfo is the part of `podman image inspect` the tests check.
type imageInfo struct {
	Config struct {
		User       string
		Entrypoint []string
		Cmd        []string
		Env        []string
	}
	RootFS struct {
		Layers []string
	}
	Size         int64
	Os           string
	Architecture string
}

// TestImage builds the image from the repository's Dockerfile into a tag of its own, removed at the
// end, and checks it: its configuration, its one file, and two runs of its entrypoint.
func TestImage(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not on PATH: make image-check installs it from Debian's packages")
	}
	root := repoRoot(t)
	bin := filepath.Join(root, binary)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the image's binary: %v (make image-binary builds it)", err)
	}
	tag := build(t, root)

	t.Run("config", func(t *testing.T) { checkConfig(t, tag, bin) })
	t.Run("files", func(t *testing.T) { checkFiles(t, tag, bin) })
	t.Run("version", func(t *testing.T) { checkVersion(t, tag, bin) })
	t.Run("run once", func(t *testing.T) { checkRunOnce(t, tag, root) })
}

// repoRoot returns the repository's root: two folders above this file.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("repository root: no source path for this file")
	}
	root := filepath.Join(filepath.Dir(self), "..", "..")
	for _, name := range []string{"go.mod", "Dockerfile"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Fatalf("repository root %s: %v", root, err)
		}
	}
	return root
}

// build builds the Dockerfile of root into a new tag, removed when the test ends, and returns the
// tag. --pull=never makes a build that would need a registry fail instead of reaching one.
func build(t *testing.T, root string) string {
	t.Helper()
	tag := fmt.Sprintf("localhost/haroute-image-test:%d-%d", os.Getpid(), time.Now().UnixNano())
	start := time.Now()
	if _, stderr, err := podman(buildTimeout, "build", "--pull=never", "--network=none",
		"-f", filepath.Join(root, "Dockerfile"), "-t", tag, root); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	t.Logf("built %s in %v", tag, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if _, stderr, err := podman(commandTimeout, "rmi", "--force", tag); err != nil {
			t.Errorf("removing the test image: %v\n%s", err, stderr)
		}
	})
	return tag
}

// checkConfig checks what the image says about itself: the user, the entrypoint, one layer about
// the size of the binary, the platform.
func checkConfig(t *testing.T, tag, bin string) {
	out, stderr, err := podman(commandTimeout, "image", "inspect", tag)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var infos []imageInfo
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != 1 {
		t.Fatalf("podman image inspect %s: want one image, got %d (%v):\n%s", tag, len(infos), err, out)
	}
	info := infos[0]
	if want := fmt.Sprintf("%d:%d", user, user); info.Config.User != want {
		t.Errorf("user %q, want %q", info.Config.User, want)
	}
	if want := []string{inImage}; !slices.Equal(info.Config.Entrypoint, want) {
		t.Errorf("entrypoint %q, want %q", info.Config.Entrypoint, want)
	}
	if !slices.Equal(info.Config.Env, []string{pathEnv}) {
		t.Errorf("env %q, want %q alone", info.Config.Env, pathEnv)
	}
	if len(info.Config.Cmd) != 0 {
		t.Errorf("cmd %q, want none: the arguments are the pod's", info.Config.Cmd)
	}
	if len(info.RootFS.Layers) != 1 {
		t.Errorf("%d layers, want 1 (the binary on scratch): %q", len(info.RootFS.Layers), info.RootFS.Layers)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size < st.Size() || info.Size > st.Size()+layerOverhead {
		t.Errorf("image size %d, want the binary's %d plus at most %d", info.Size, st.Size(), layerOverhead)
	}
	if info.Os != "linux" || info.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", info.Os, info.Architecture, runtime.GOARCH)
	}
}

// checkFiles mounts the image and checks that it holds inImage alone: the very bytes of bin, owned
// by root (so the user it runs as cannot change it) and executable.
func checkFiles(t *testing.T, tag, bin string) {
	out, stderr, err := podman(commandTimeout, "image", "mount", tag)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if _, stderr, err := podman(commandTimeout, "image", "unmount", tag); err != nil {
			t.Errorf("%v\n%s", err, stderr)
		}
	})
	mnt := strings.TrimSpace(out)
	var names []string
	err = filepath.WalkDir(mnt, func(path string, _ fs.DirEntry, err error) error {
		if err != nil || path == mnt {
			return err
		}
		rel, err := filepath.Rel(mnt, path)
		names = append(names, rel)
		return err
	})
	if err != nil {
		t.Fatalf("listing the image at %s: %v", mnt, err)
	}
	if want := []string{"usr", "usr/local", "usr/local/bin", "usr/local/bin/haroute"}; !slices.Equal(names, want) {
		t.Fatalf("the image holds %q, want %q alone", names, want)
	}
	file := filepath.Join(mnt, filepath.FromSlash(inImage))
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o755 {
		t.Errorf("%s: mode %v, want a regular file, -rwxr-xr-x", inImage, st.Mode())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != 0 || sys.Gid != 0 {
		t.Errorf("%s: owner %+v, want root:root", inImage, st.Sys())
	}
	if got, want := digest(t, file), digest(t, bin); got != want {
		t.Errorf("%s: sha256 %s, but %s has %s", inImage, got, binary, want)
	}
}

// checkVersion runs the entrypoint's version command in the image and compares its line with the
// one the binary prints outside.
func checkVersion(t *testing.T, tag, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	want, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	if !bytes.HasPrefix(want, []byte("haroute ")) {
		t.Fatalf("%s version printed %q, want haroute <version> ...", bin, want)
	}
	got, stderr, err := runImage(tag, nil, "version")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got != string(want) {
		t.Errorf("the image's version is %q, the binary's %q", got, want)
	}
	// What `kubectl exec … -- haroute …` runs: the name, found on the image's PATH.
	got, stderr, err = runImage(tag, []string{"--entrypoint", "haroute"}, "version")
	if err != nil || got != string(want) {
		t.Errorf("haroute by name in the image: %q, %v\n%s", got, err, stderr)
	}
}

// checkRunOnce runs `run --once` in the image on a manifest folder mounted read-only and an HAProxy
// folder it may write: the first configuration must be there, written by the image's user.
func checkRunOnce(t *testing.T, tag, root string) {
	manifests, out := t.TempDir(), t.TempDir()
	raw, err := os.ReadFile(filepath.Join(root, example))
	if err != nil {
		t.Fatal(err)
	}
	// The container's user reads the manifests and writes the HAProxy folder: t.TempDir makes
	// both 0700 for root.
	if err := os.WriteFile(filepath.Join(manifests, filepath.Base(example)), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, user, user); err != nil {
		t.Fatal(err)
	}

	volumes := []string{"--volume", manifests + ":/m:ro", "--volume", out + ":/h"}
	_, stderr, err := runImage(tag, volumes, "run", "--once", "--manifests", "/m", "--haproxy-dir", "/h")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"wrote the first configuration", "routes=1 rejected=0"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the log does not say %q:\n%s", want, stderr)
		}
	}

	cfg, err := reload.ReadConfiguration(out)
	if err != nil {
		t.Fatalf("run --once wrote no configuration: %v", err)
	}
	if !bytes.Contains(cfg, []byte("be_http:demo:hello")) {
		t.Errorf("the configuration has no backend be_http:demo:hello for the example's Route")
	}
	// Every file run --once wrote is the image user's: the process ran as that user, not as root.
	err = filepath.WalkDir(out, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != user || sys.Gid != user {
			t.Errorf("%s: owner %+v, want %d:%d", path, st.Sys(), user, user)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runImage runs tag locked down, with extra podman flags before the image, and returns the
// entrypoint's stdout and stderr.
func runImage(tag string, extra []string, args ...string) (string, string, error) {
	cmd := append(append(append([]string{"run"}, lockedDown...), limits...), extra...)
	cmd = append(append(cmd, tag), args...)
	return podman(commandTimeout, cmd...)
}

// podman runs podman with args under timeout, with the test's OCI runtime, and returns its stdout
// and stderr. The error names the command.
func podman(timeout time.Duration, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append([]string{"--runtime", ociRuntime}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %v: %w", timeout, err)
	}
	if err != nil {
		err = fmt.Errorf("podman %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), err
}

// digest returns the sha256 of the file at path, in hex.
func digest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

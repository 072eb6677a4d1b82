//go:build e2e

package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// procRoot is where the process table is read.
const procRoot = "/proc"

// Proc is one process of the process table, as far as the helpers need it.
type Proc struct {
	PID, PPID int
	// Exe is the target of /proc/PID/exe ("" when unreadable: a zombie, a kernel thread, a process
	// that just ended).
	Exe string
	// MountNS is the target of /proc/PID/ns/mnt, e.g. "mnt:[4026531841]" ("" when unreadable).
	MountNS string
}

// IsHAProxy reports whether the process runs an HAProxy binary (its executable's name starts with
// "haproxy": /usr/sbin/haproxy, bin/haproxy-3.2, "haproxy (deleted)" after an upgrade).
func (p Proc) IsHAProxy() bool { return strings.HasPrefix(filepath.Base(p.Exe), "haproxy") }

// Procs returns every process of the process table (processes that end while it is read are left out).
func Procs() ([]Proc, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", procRoot, err)
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		ppid, err := parentPID(pid)
		if err != nil {
			continue // ended meanwhile
		}
		p := Proc{PID: pid, PPID: ppid}
		p.Exe, _ = os.Readlink(filepath.Join(procRoot, e.Name(), "exe"))
		p.MountNS, _ = os.Readlink(filepath.Join(procRoot, e.Name(), "ns", "mnt"))
		out = append(out, p)
	}
	return out, nil
}

// parentPID reads the parent's PID from /proc/PID/stat (the field after the parenthesised command
// name, which may itself hold spaces and parentheses).
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("stat of %d: %w", pid, err)
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("stat of %d: unexpected %q", pid, s)
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("stat of %d: unexpected %q", pid, s)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, fmt.Errorf("stat of %d: parent %q: %w", pid, fields[1], err)
	}
	return ppid, nil
}

// MountNS returns the mount namespace of pid (the target of /proc/PID/ns/mnt).
func MountNS(pid int) (string, error) {
	ns, err := os.Readlink(filepath.Join(procRoot, strconv.Itoa(pid), "ns", "mnt"))
	if err != nil {
		return "", fmt.Errorf("mount namespace of %d: %w", pid, err)
	}
	return ns, nil
}

// HAProxyInMountNS returns the PIDs, sorted, of the HAProxy processes in mount namespace ns.
func HAProxyInMountNS(ns string) ([]int, error) {
	procs, err := Procs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		if p.MountNS == ns && p.IsHAProxy() {
			out = append(out, p.PID)
		}
	}
	sort.Ints(out)
	return out, nil
}

// HAProxyDescendants returns the PIDs, sorted, of the HAProxy processes below pid in the process tree
// (haroute's managed HAProxy: the master is its child, the workers the master's).
func HAProxyDescendants(pid int) ([]int, error) {
	procs, err := Procs()
	if err != nil {
		return nil, err
	}
	children := map[int][]Proc{}
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []int
	queue := children[pid]
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.PID] {
			continue
		}
		seen[p.PID] = true
		if p.IsHAProxy() {
			out = append(out, p.PID)
		}
		queue = append(queue, children[p.PID]...)
	}
	sort.Ints(out)
	return out, nil
}

// RSS returns the sum of the resident set sizes (VmRSS of /proc/PID/status) of pids, in kB. A
// process that has ended (or has no memory: a zombie) counts 0.
func RSS(pids []int) (int, error) {
	return sumField(pids, "status", "VmRSS:")
}

// PSS returns the sum of the proportional set sizes (Pss of /proc/PID/smaps_rollup) of pids, in kB:
// pages shared by several processes (an HAProxy master and its forked workers) are divided among
// them instead of counted in each, as RSS does. A process that has ended counts 0.
func PSS(pids []int) (int, error) {
	return sumField(pids, "smaps_rollup", "Pss:")
}

// sumField sums the "<field> N kB" line of /proc/PID/<file> over pids.
func sumField(pids []int, file, field string) (int, error) {
	total := 0
	for _, pid := range pids {
		kB, err := readKB(filepath.Join(procRoot, strconv.Itoa(pid), file), field)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) || errors.Is(err, errNoField) {
			continue // ended, or a zombie without memory
		}
		if err != nil {
			return 0, err
		}
		total += kB
	}
	return total, nil
}

var errNoField = errors.New("no such field")

// readKB returns the value of the "<field> N kB" line of path.
func readKB(path, field string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		kB, err := strconv.Atoi(num)
		if err != nil {
			return 0, fmt.Errorf("%s: %s %q: %w", path, field, rest, err)
		}
		return kB, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return 0, fmt.Errorf("%s: %s: %w", path, field, errNoField)
}

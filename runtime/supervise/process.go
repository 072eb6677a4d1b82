package supervise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
)

// Signals of the stop sequence.
const (
	sigSoftStop = syscall.SIGUSR1 // HAProxy's soft stop; the master forwards it to its workers
	sigTerm     = syscall.SIGTERM
)

// Output bounds.
const (
	// maxLine is the longest output line logged; the rest of a longer line is dropped.
	maxLine = 4096
	// outputDrain bounds the wait for the last output after the master has exited (a stray worker
	// can hold the pipes open).
	outputDrain = 2 * time.Second
)

// runDirMode is the mode of dir/run when the supervisor creates it.
const runDirMode = 0o755

// process is one started HAProxy master.
type process struct {
	cmd    *exec.Cmd
	pid    int
	exited chan struct{} // closed once the master has been reaped
	err    error         // cmd.Wait's result, valid once exited is closed

	outputs    []*os.File     // read ends of stdout and stderr
	alerts     alerts         // its [ALERT] lines, for diagnose
	readers    sync.WaitGroup // the goroutines logging them
	finishOnce sync.Once
}

// start starts HAProxy once. The child gets its own process group (so the workers can be reached
// through it) and SIGKILL when the thread that started it dies (haroute gone: no orphan HAProxy).
func (s *Supervisor) start(attempt int) (*process, error) {
	if err := os.MkdirAll(layout.For(s.dir).RunDir(), runDirMode); err != nil {
		return nil, fmt.Errorf("creating the socket directory: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	cmd := exec.Command(s.bin, append([]string{"-W", "-db", "-S", s.MasterSocket() + ",mode,600"}, render.ConfigArgs(s.dir)...)...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	// The child holds its own copies of the write ends; the reads end when every holder has exited.
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		return nil, fmt.Errorf("starting %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{}), outputs: []*os.File{outR, errR}}
	s.pid.Store(int64(p.pid))
	log := s.log.With("pid", p.pid)
	log.Info("haproxy starting", "attempt", attempt, "bin", s.bin, "config", s.ConfigPath())
	p.readers.Add(2)
	out := output{alerts: &p.alerts, quiet: s.quietAlerts()}
	go out.log(&p.readers, outR, log.With("stream", "stdout"))
	go out.log(&p.readers, errR, log.With("stream", "stderr"))
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// done reports whether the master has exited.
func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the master to exit.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the master (a no-op once it has been reaped).
func (p *process) signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, p.pid, err)
	}
	return nil
}

// killGroup SIGKILLs the process group the master leads (workers included). After the master has
// been reaped the group id stays HAProxy's as long as one of its workers lives (Linux does not hand
// out a PID still used as a group id); with no member left the call finds nothing.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
}

// status describes how the master ended ("running" before it has).
func (p *process) status() string {
	if !p.done() {
		return "running"
	}
	if p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.String()
	}
	if p.err != nil {
		return p.err.Error()
	}
	return "exited"
}

// finish waits (bounded) for the output readers once the master is gone and closes the pipes, so no
// output is logged after Run has returned.
func (p *process) finish() {
	p.finishOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			p.readers.Wait()
			close(done)
		}()
		t := time.NewTimer(outputDrain)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			for _, f := range p.outputs { // unblocks the readers
				_ = f.Close()
			}
			<-done
		}
		for _, f := range p.outputs {
			_ = f.Close()
		}
	})
}

// log logs r line by line (lines cut at maxLine bytes) until EOF or an error, at the level
// classify gives each line.
// output logs one process's output: its alerts are kept, and an alert the previous failed start
// already reported (quiet) is logged at debug, so that a start failing again and again says why once.
type output struct {
	alerts *alerts
	quiet  map[string]bool
}

func (o output) log(wg *sync.WaitGroup, r io.Reader, log *slog.Logger) {
	defer wg.Done()
	br := bufio.NewReaderSize(r, maxLine)
	var line []byte
	for {
		chunk, more, err := br.ReadLine()
		if len(line) < maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
		}
		if err != nil {
			if len(line) > 0 {
				o.line(log, string(line))
			}
			return
		}
		if more {
			continue
		}
		o.line(log, string(line))
		line = line[:0]
	}
}

func (o output) line(log *slog.Logger, line string) {
	level, attrs := classify(line)
	if strings.Contains(line, "[ALERT]") && !lowFDLimit(line) {
		o.alerts.add(line)
		if o.quiet[alertText(line)] {
			level = slog.LevelDebug
		}
	}
	log.Log(context.Background(), level, msgOutput, append(attrs, "line", line)...)
}

package kubeenv

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one control-plane program with its log file.
type process struct {
	name    string
	bin     string // with args: what a restart runs again
	args    []string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // set before exited is closed
}

// startProcess runs bin with args, logging to dir/<name>.log (and to stderr when
// GANTRY_KUBEENV_VERBOSE is set).
func startProcess(dir, name, bin string, args []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("kubeenv: %s log: %w", name, err)
	}
	var out io.Writer = logFile
	if os.Getenv("GANTRY_KUBEENV_VERBOSE") != "" {
		out = io.MultiWriter(logFile, os.Stderr)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so a stop reaches nothing else and Ctrl-C on `go test` does
	// not race our orderly shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("kubeenv: start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, bin: bin, args: args, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks the process to terminate and kills it if it has not gone after grace.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// logTail is the end of the process's log, for error messages.
func (p *process) logTail() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	const max = 3000
	if len(data) > max {
		data = data[len(data)-max:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

// failure describes a process that exited or never became ready.
func (p *process) failure(what string) error {
	state := "still running"
	if !p.running() {
		state = fmt.Sprintf("exited: %v", p.err)
	}
	return fmt.Errorf("kubeenv: %s %s (%s); log %s ends with:\n%s", p.name, what, state, p.logPath, p.logTail())
}

// freePorts reserves n distinct loopback ports. The listeners are closed before the
// ports are used, so another process could take one in between; the window is tiny
// and a clash fails loudly at startup.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("kubeenv: reserve port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// kill ends the process at once (SIGKILL), as a crash would.
func (p *process) kill() {
	if p.running() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

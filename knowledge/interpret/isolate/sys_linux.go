//go:build linux

package isolate

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// limitSelf sets the worker's RLIMIT_DATA (what is mapped now plus
// memoryBytes) and RLIMIT_CPU (cpuSeconds, the kernel's SIGXCPU then ending
// the worker; a hard limit a few seconds later kills it if it did not).
func limitSelf(memoryBytes, cpuSeconds int64) error {
	if memoryBytes > 0 {
		limit := uint64(dataMapped() + memoryBytes)
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			return err
		}
	}
	if cpuSeconds > 0 {
		xcpu := make(chan os.Signal, 1)
		signal.Notify(xcpu, syscall.SIGXCPU)
		go func() {
			<-xcpu
			cpuExceeded()
		}()
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpuSeconds), Max: uint64(cpuSeconds + 5)}); err != nil {
			return err
		}
	}
	return nil
}

// dataMapped is the process's data segment size (VmData: what RLIMIT_DATA
// counts), 0 if /proc does not say.
func dataMapped() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmData:")); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				kb, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// isolateProcess puts the worker in a process group of its own, so that
// killing it kills whatever it started, and a terminal's Ctrl-C reaches the
// service (which then kills it) rather than the worker. The kernel kills
// the worker should the service die first (SIGKILL, a crash): Pdeathsig
// follows the thread that started it, and the Go runtime does not end its
// threads (only those of a goroutine that exits locked to one, which the
// service does not do).
func isolateProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killProcess kills the worker's process group.
func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}

// cpuSignalled reports whether the worker died of the CPU limit's signals.
func cpuSignalled(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGXCPU
}

// killedBySomeoneElse reports whether the worker was killed by SIGKILL that
// the Runner did not send: the CPU hard limit or the kernel's OOM killer.
func killedBySomeoneElse(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

//go:build unix

package bench

import (
	"runtime"
	"syscall"
	"time"
)

// processUsage is the process's user+system CPU time so far and its peak resident set
// in bytes (zeros if getrusage fails).
func processUsage() (cpu time.Duration, peakRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peakRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		peakRSS *= 1024 // kilobytes elsewhere, bytes on Darwin
	}
	return cpu, peakRSS
}

//go:build !unix

package bench

import "time"

// processUsage is unknown without getrusage: zeros.
func processUsage() (cpu time.Duration, peakRSS int64) { return 0, 0 }

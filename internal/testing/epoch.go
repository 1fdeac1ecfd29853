package testing

import "time"

// Epoch is the tests' origin of time: workloads are created at Epoch unless told
// otherwise, so orders by age depend only on what a test sets.
func Epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

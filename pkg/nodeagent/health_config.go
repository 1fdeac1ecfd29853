package nodeagent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// EnvDisableHealthChecks is the variable NVIDIA's device plugin reads to switch health
// checks off: "all" or "xids" turns them off, a comma list of XIDs ignores those XIDs on
// top of the application XIDs. The node agent reads it once, at start-up.
const EnvDisableHealthChecks = "DP_DISABLE_HEALTHCHECKS"

// HealthChecks is the health-check configuration. The zero value is NVIDIA's default:
// checks on, application XIDs ignored.
type HealthChecks struct {
	// Off turns health checks off entirely (no GPU is watched or marked).
	Off bool
	// IgnoredXIDs are ignored on top of the application XIDs, sorted.
	IgnoredXIDs []uint64
}

// ParseHealthChecks reads a DP_DISABLE_HEALTHCHECKS value. Unlike NVIDIA's plugin,
// which logs and skips a malformed entry, it refuses one: a typo would otherwise leave
// a noisy XID marking GPUs unhealthy.
func ParseHealthChecks(value string) (HealthChecks, error) {
	var c HealthChecks
	for _, f := range strings.Split(strings.ToLower(value), ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "":
			continue
		case "all", "xids":
			return HealthChecks{Off: true}, nil
		}
		xid, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return HealthChecks{}, fmt.Errorf("%s=%q: entry %q is neither \"all\", \"xids\" nor an XID number", EnvDisableHealthChecks, value, f)
		}
		if !slices.Contains(c.IgnoredXIDs, xid) {
			c.IgnoredXIDs = append(c.IgnoredXIDs, xid)
		}
	}
	slices.Sort(c.IgnoredXIDs)
	return c, nil
}

// ignores reports whether an XID leaves the device healthy.
func (c HealthChecks) ignores(xid uint64) bool {
	return c.Off || applicationXID(xid) || slices.Contains(c.IgnoredXIDs, xid)
}

// applicationXID reports XIDs caused by the application, not the GPU, which NVIDIA's
// device plugin always ignores: 13 graphics engine exception, 31 GPU memory page fault,
// 43 GPU stopped processing, 45 preemptive cleanup, 68 video processor exception,
// 109 context switch timeout.
func applicationXID(xid uint64) bool {
	switch xid {
	case 13, 31, 43, 45, 68, 109:
		return true
	}
	return false
}

package sim

import (
	"fmt"
	"strconv"
	"time"
)

// FormatDuration renders seconds compactly ("45s", "12m30s", "3h05m", "2d04h"). It lives
// beside Seconds because explain here and the KPI report (pkg/sim/report) share it.
func FormatDuration(s Seconds) string {
	d := s.Duration().Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	default:
		return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
}

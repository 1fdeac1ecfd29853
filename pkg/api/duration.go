package api

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration that parses the forms users write in annotations and
// YAML: Go durations ("90s", "1h30m"), plus days ("2d").
type Duration = time.Duration

// ParseDuration parses "90s", "2h", "1h30m", "2d" or a plain number of seconds ("120").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if strings.HasSuffix(s, "d") {
		var days int64
		if _, err := fmt.Sscanf(strings.TrimSuffix(s, "d"), "%d", &days); err != nil || days < 0 {
			return 0, fmt.Errorf("invalid duration %q: want e.g. \"90s\", \"2h\", \"1h30m\" or \"2d\"", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	var secs int64
	if n, err := fmt.Sscanf(s, "%d", &secs); err == nil && n == 1 && fmt.Sprint(secs) == s {
		if secs < 0 {
			return 0, fmt.Errorf("invalid duration %q: negative", s)
		}
		return time.Duration(secs) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want e.g. \"90s\", \"2h\", \"1h30m\" or \"2d\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: negative", s)
	}
	return d, nil
}

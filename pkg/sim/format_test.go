package sim

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	secs := func(n int64) Seconds { return Seconds(time.Duration(n) * time.Second) }
	tests := []struct{ got, want string }{
		{FormatDuration(secs(45)), "45s"},
		{FormatDuration(secs(750)), "12m30s"},
		{FormatDuration(secs(3*3600 + 300)), "3h05m"},
		{FormatDuration(secs(2*86400 + 4*3600)), "2d04h"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

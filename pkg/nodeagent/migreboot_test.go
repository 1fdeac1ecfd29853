package nodeagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

func TestMIGCommandRebooter(t *testing.T) {
	tests := []struct {
		argv    []string
		wantErr string
	}{
		{[]string{"true"}, ""},
		{[]string{"sh", "-c", "echo no permission >&2; exit 1"}, `reboot command "sh -c echo no permission >&2; exit 1": exit status 1: no permission`},
		{nil, "reboot command is empty"},
	}
	for _, tc := range tests {
		err := nodeagent.CommandRebooter{Argv: tc.argv}.Reboot(context.Background())
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%q: error %v, want %q", tc.argv, err, tc.wantErr)
		}
	}
}

//go:build !cgo

package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestNodeAgentNeedsCgo(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, strings.NewReader(""), &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "node-agent needs a cgo build") {
		t.Errorf("exit %d, stderr %q; want 1 and the cgo explanation", code, errOut.String())
	}
}

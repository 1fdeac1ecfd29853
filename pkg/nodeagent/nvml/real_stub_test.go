//go:build !(nvml && cgo)

package nvml

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultBuildHasNoNVML(t *testing.T) {
	lib, err := New()
	if lib != nil || !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), "-tags nvml") {
		t.Errorf("New() = %v, %v; want ErrNotBuilt naming -tags nvml", lib, err)
	}
}

package nvml

import (
	"errors"
	"testing"
)

func TestReturnCodes(t *testing.T) {
	tests := []struct {
		r Return
		// want is String(); isErr whether Err() is non-nil.
		want  string
		isErr bool
	}{
		{SUCCESS, "SUCCESS", false},
		{ERROR_INSUFFICIENT_RES, "ERROR_INSUFFICIENT_RESOURCES", true},
		{Return(77), "NVML_RETURN(77)", true},
	}
	for _, tc := range tests {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%d.String() = %q, want %q", int32(tc.r), got, tc.want)
		}
		if (tc.r.Err() != nil) != tc.isErr {
			t.Errorf("%s.Err() = %v", tc.r, tc.r.Err())
		}
	}
	err := Wrap(ERROR_IN_USE, "GPU %d: destroying", 3)
	if !errors.Is(err, ERROR_IN_USE) || err.Error() != "GPU 3: destroying: nvml: ERROR_IN_USE" {
		t.Errorf("Wrap = %v", err)
	}
	if Wrap(SUCCESS, "x") != nil {
		t.Error("Wrap(SUCCESS) is not nil")
	}
}

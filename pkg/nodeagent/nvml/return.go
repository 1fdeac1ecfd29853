package nvml

import "fmt"

// Return is an NVML return code (nvmlReturn_t). Methods return it next to their value,
// as go-nvml does; SUCCESS means the value is valid.
type Return int32

// The NVML return codes Gantry tells apart (values as in nvml.h).
const (
	SUCCESS                  Return = 0
	ERROR_UNINITIALIZED      Return = 1
	ERROR_INVALID_ARGUMENT   Return = 2
	ERROR_NOT_SUPPORTED      Return = 3
	ERROR_NO_PERMISSION      Return = 4
	ERROR_NOT_FOUND          Return = 6
	ERROR_INSUFFICIENT_RES   Return = 7
	ERROR_TIMEOUT            Return = 10
	ERROR_LIBRARY_NOT_FOUND  Return = 12
	ERROR_FUNCTION_NOT_FOUND Return = 13
	ERROR_GPU_IS_LOST        Return = 15
	ERROR_IN_USE             Return = 19
	ERROR_UNKNOWN            Return = 999
)

var returnNames = map[Return]string{
	SUCCESS:                  "SUCCESS",
	ERROR_UNINITIALIZED:      "ERROR_UNINITIALIZED",
	ERROR_INVALID_ARGUMENT:   "ERROR_INVALID_ARGUMENT",
	ERROR_NOT_SUPPORTED:      "ERROR_NOT_SUPPORTED",
	ERROR_NO_PERMISSION:      "ERROR_NO_PERMISSION",
	ERROR_NOT_FOUND:          "ERROR_NOT_FOUND",
	ERROR_INSUFFICIENT_RES:   "ERROR_INSUFFICIENT_RESOURCES",
	ERROR_TIMEOUT:            "ERROR_TIMEOUT",
	ERROR_LIBRARY_NOT_FOUND:  "ERROR_LIBRARY_NOT_FOUND",
	ERROR_FUNCTION_NOT_FOUND: "ERROR_FUNCTION_NOT_FOUND",
	ERROR_GPU_IS_LOST:        "ERROR_GPU_IS_LOST",
	ERROR_IN_USE:             "ERROR_IN_USE",
	ERROR_UNKNOWN:            "ERROR_UNKNOWN",
}

// String names the code.
func (r Return) String() string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return fmt.Sprintf("NVML_RETURN(%d)", int32(r))
}

// Error makes a non-success code usable as an error.
func (r Return) Error() string { return "nvml: " + r.String() }

// Err is nil for SUCCESS and the code itself otherwise, for `if err := r.Err(); ...`.
func (r Return) Err() error {
	if r == SUCCESS {
		return nil
	}
	return r
}

// Wrap turns a non-success code into an error saying what was being done.
func Wrap(r Return, format string, args ...any) error {
	if r == SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), r)
}

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

// String names the code.
func (r Return) String() string {
	switch r {
	case SUCCESS:
		return "SUCCESS"
	case ERROR_UNINITIALIZED:
		return "ERROR_UNINITIALIZED"
	case ERROR_INVALID_ARGUMENT:
		return "ERROR_INVALID_ARGUMENT"
	case ERROR_NOT_SUPPORTED:
		return "ERROR_NOT_SUPPORTED"
	case ERROR_NO_PERMISSION:
		return "ERROR_NO_PERMISSION"
	case ERROR_NOT_FOUND:
		return "ERROR_NOT_FOUND"
	case ERROR_INSUFFICIENT_RES:
		return "ERROR_INSUFFICIENT_RESOURCES"
	case ERROR_TIMEOUT:
		return "ERROR_TIMEOUT"
	case ERROR_LIBRARY_NOT_FOUND:
		return "ERROR_LIBRARY_NOT_FOUND"
	case ERROR_FUNCTION_NOT_FOUND:
		return "ERROR_FUNCTION_NOT_FOUND"
	case ERROR_GPU_IS_LOST:
		return "ERROR_GPU_IS_LOST"
	case ERROR_IN_USE:
		return "ERROR_IN_USE"
	case ERROR_UNKNOWN:
		return "ERROR_UNKNOWN"
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

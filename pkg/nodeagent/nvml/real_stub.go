//go:build !(nvml && cgo)

package nvml

// New would load libnvidia-ml.so.1; this build has no NVML support, so it always
// returns ErrNotBuilt.
func New() (Interface, error) { return nil, ErrNotBuilt }

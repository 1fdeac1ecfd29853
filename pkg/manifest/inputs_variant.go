package manifest

import (
	"os"
	"path/filepath"
)

// VariantMarker is the file that makes a folder a variant of its parent: the same
// objects written another way (examples/dra/ asks for examples/workloads/' GPUs
// through DRA claims), read when the folder itself is named and left out when a
// parent folder is read, where it would define every object twice.
const VariantMarker = ".gantry-variant"

// isVariantFolder reports whether dir holds VariantMarker.
func isVariantFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, VariantMarker))
	return err == nil
}

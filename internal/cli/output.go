package cli

import (
	"encoding/json"
	"io"
)

// writeJSON writes v as indented JSON: the `-o json` of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

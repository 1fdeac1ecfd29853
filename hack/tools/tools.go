//go:build tools

// Package tools pins the code generators Gantry uses (run through `go run` from this
// module so the version comes from go.sum, not from whatever is installed).
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"

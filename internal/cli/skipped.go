package cli

import (
	"fmt"
	"io"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// strictHelp is the --strict flag's help, the same on every command that loads manifests.
const strictHelp = "refuse objects of kinds that do not affect scheduling (ConfigMap, Service, RBAC, ...) instead of skipping them with a warning"

// skippedProblems turns the loader's skipped objects into problems (under --strict).
func skippedProblems(objs *api.Objects) manifest.ErrorList {
	var out manifest.ErrorList
	for _, s := range objs.Skipped {
		out = append(out, &manifest.Error{Source: s.Source, Kind: s.Kind, Name: s.Name, Field: "kind",
			Msg: s.Why + "; --strict refuses it (without --strict it is skipped)"})
	}
	return out
}

// warnSkipped prints one warning line per skipped object.
func warnSkipped(w io.Writer, objs *api.Objects) {
	for _, s := range objs.Skipped {
		fmt.Fprintln(w, "warning: "+s.String())
	}
}

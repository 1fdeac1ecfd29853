package admission

import (
	"fmt"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// TestPropertyAdmittedSetClones: copies share a base but never see each other's
// changes, through any sequence of adds, removes, clones and compactions.
func TestPropertyAdmittedSetClones(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Folding after a few changes, so copies fold often while sharing older bases.
		sets := []admittedSet{newAdmittedSetFoldingAt(rapid.IntRange(1, 16).Draw(t, "foldAt"))}
		refs := []map[api.WorkloadID]bool{{}}
		next := 0
		for step := rapid.IntRange(1, 400).Draw(t, "steps"); step > 0; step-- {
			k := rapid.IntRange(0, len(sets)-1).Draw(t, "copy")
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op == 0: // a new copy, or one replacing another (copies made after folds)
				c, ref := sets[k].clone(), map[api.WorkloadID]bool{}
				for id := range refs[k] {
					ref[id] = true
				}
				if len(sets) < 4 {
					sets, refs = append(sets, c), append(refs, ref)
				} else {
					j := rapid.IntRange(0, len(sets)-1).Draw(t, "replace")
					sets[j], refs[j] = c, ref
				}
			case op < 6 || len(refs[k]) == 0:
				next++
				id := api.WorkloadID(fmt.Sprint(next))
				sets[k].add(&AdmittedWorkload{ID: id})
				refs[k][id] = true
			default:
				ids := sortedKeys(toStrings(refs[k]))
				id := api.WorkloadID(rapid.SampledFrom(ids).Draw(t, "remove"))
				sets[k].remove(id)
				delete(refs[k], id)
			}
		}
		for k := range sets {
			seen := map[api.WorkloadID]bool{}
			sets[k].each(func(w *AdmittedWorkload) { seen[w.ID] = true })
			if len(seen) != len(refs[k]) || sets[k].len() != len(refs[k]) {
				t.Fatalf("copy %d: %d seen, len %d, want %d", k, len(seen), sets[k].len(), len(refs[k]))
			}
			for id := range refs[k] {
				if _, ok := sets[k].get(id); !ok || !seen[id] {
					t.Fatalf("copy %d lost %s", k, id)
				}
			}
		}
	})
}

func toStrings(m map[api.WorkloadID]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for id := range m {
		out[string(id)] = true
	}
	return out
}

package manifest

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resourceGroups converts and checks Kueue resource groups: every flavor appears once in
// the whole queue, every resource is covered by one group only, and each flavor lists
// exactly the group's covered resources.
func resourceGroups(in []v1alpha1.ResourceGroup, path string, c errs) []api.ResourceGroup {
	out := make([]api.ResourceGroup, 0, len(in))
	coveredBy := map[resources.Name]int{}
	flavorAt := map[string]string{}
	for gi, g := range in {
		gp := joinIndex(path, gi)
		rg := api.ResourceGroup{}
		covered := map[resources.Name]bool{}
		for ri, r := range g.CoveredResources {
			n := resources.Name(r)
			rp := joinIndex(gp+".coveredResources", ri)
			if prev, dup := coveredBy[n]; dup {
				if prev == gi {
					c.add(rp, "resource %s is listed twice", n)
				} else {
					c.add(rp, "resource %s is already covered by resourceGroups[%d]: a resource may be covered by one group only", n, prev)
				}
				covered[n] = true // reported once here, not again for each flavor
				continue
			}
			coveredBy[n] = gi
			covered[n] = true
			rg.CoveredResources = append(rg.CoveredResources, n)
		}
		if len(g.Flavors) == 0 {
			c.add(gp+".flavors", "a resource group needs at least one flavor")
		}
		for fi, f := range g.Flavors {
			fp := joinIndex(gp+".flavors", fi)
			if f.Name == "" {
				c.add(fp+".name", "missing flavor name")
				continue
			}
			if prev, dup := flavorAt[f.Name]; dup {
				c.add(fp+".name", "flavor %q is listed twice (first at %s): a flavor may appear once per queue", f.Name, prev)
				continue
			}
			flavorAt[f.Name] = fp
			rg.Flavors = append(rg.Flavors, flavorQuotas(f, covered, g.CoveredResources, fp, c))
		}
		out = append(out, rg)
	}
	return out
}

// flavorQuotas converts one flavor's quotas, checking them against the covered resources.
func flavorQuotas(f v1alpha1.FlavorQuotas, covered map[resources.Name]bool, order []corev1.ResourceName, fp string, c errs) api.FlavorQuotas {
	fq := api.FlavorQuotas{Name: f.Name}
	has := map[resources.Name]bool{}
	for qi, q := range f.Resources {
		qp := joinIndex(fp+".resources", qi)
		n := resources.Name(q.Name)
		if !covered[n] {
			c.add(qp+".name", "resource %s is not in the group's coveredResources", n)
			continue
		}
		if has[n] {
			c.add(qp+".name", "resource %s is listed twice", n)
			continue
		}
		has[n] = true
		rq := api.ResourceQuota{Name: n}
		rq.Nominal, _ = quantity(n, q.NominalQuota, qp+".nominalQuota", c)
		rq.BorrowingLimit = optQuantity(n, q.BorrowingLimit, qp+".borrowingLimit", c)
		rq.LendingLimit = optQuantity(n, q.LendingLimit, qp+".lendingLimit", c)
		if rq.LendingLimit != nil && *rq.LendingLimit > rq.Nominal {
			c.add(qp+".lendingLimit", "lendingLimit %s exceeds nominalQuota %s", resources.Format(n, *rq.LendingLimit), resources.Format(n, rq.Nominal))
		}
		fq.Resources = append(fq.Resources, rq)
	}
	for _, r := range order {
		if n := resources.Name(r); covered[n] && !has[n] {
			c.add(fp+".resources", "flavor %s has no quota for covered resource %s", f.Name, n)
		}
	}
	return fq
}

// quantity converts a parsed quantity into resource n's unit, reporting errors at path.
func quantity(n resources.Name, q resource.Quantity, path string, c errs) (resources.Amount, bool) {
	a, err := resources.FromQuantity(n, q)
	if err != nil {
		c.add(path, "%s", trimResourcePrefix(n, err))
		return 0, false
	}
	return a, true
}

func optQuantity(n resources.Name, q *resource.Quantity, path string, c errs) *resources.Amount {
	if q == nil {
		return nil
	}
	a, ok := quantity(n, *q, path, c)
	if !ok {
		return nil
	}
	return &a
}

// parseQuantity parses a quantity string of resource n, reporting errors at path.
func parseQuantity(n resources.Name, s, path string, c errs) (resources.Amount, bool) {
	a, err := resources.Parse(n, s)
	if err != nil {
		c.add(path, "%s", trimResourcePrefix(n, err))
		return 0, false
	}
	return a, true
}

// trimResourcePrefix drops the "name: " prefix resources errors carry when the path
// already names the resource.
func trimResourcePrefix(n resources.Name, err error) string {
	s := err.Error()
	p := fmt.Sprintf("%s: ", n)
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// weightMilli converts a fair-sharing weight quantity into thousandths (default 1).
func weightMilli(fs *v1alpha1.FairSharing, path string, c errs) int64 {
	if fs == nil || fs.Weight == nil {
		return 1000
	}
	if fs.Weight.Sign() < 0 {
		c.add(path+".weight", "weight %s is negative", fs.Weight.String())
		return 1000
	}
	return fs.Weight.MilliValue()
}

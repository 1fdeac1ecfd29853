package controller

import (
	"os"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestControllerRunsWithShippedRBAC runs the controller as a service account that has
// exactly config/rbac/role.yaml, so a permission the code needs but the shipped role
// lacks fails here rather than in a user's cluster.
func TestControllerRunsWithShippedRBAC(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("rbac-1").H100(8).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("rbac-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "rbac-cq").Obj())
	f.startControllerAs(f.shippedIdentity())
	f.create(k8s.MakeJob("", "j").Queue("lq").Pods(2).GPUs("4").Obj())
	f.waitBound("j", 2)
}

// shippedIdentity creates, once per test, a service account holding exactly the
// shipped roles: config/rbac/role.yaml cluster-wide and the leader election Role in the
// test's namespace (where a leader-electing controller keeps its Lease). It returns a
// config acting as that account.
func (f *fixture) shippedIdentity() *rest.Config {
	f.t.Helper()
	if f.identity != nil {
		return f.identity
	}
	var role rbacv1.ClusterRole
	f.createFromFile("../../config/rbac/role.yaml", &role)
	var election rbacv1.Role
	f.createFromFile("../../config/rbac/leader_election_role.yaml", &election)
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "gantry-controller", Namespace: f.ns}
	f.create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "gantry-controller"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{sa}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: election.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: election.Name},
			Subjects: []rbacv1.Subject{sa}})
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + f.ns + ":" + sa.Name}
	f.identity = cfg
	return cfg
}

// createFromFile creates the object a shipped manifest holds, read strictly.
func (f *fixture) createFromFile(path string, obj client.Object) {
	f.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		f.t.Fatalf("%s: %v", path, err)
	}
	f.create(obj)
}

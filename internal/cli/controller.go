package cli

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// controllerFlags are the settings of `gantry controller`, read once into typed values.
type controllerFlags struct {
	kubeconfig     string
	metricsAddr    string
	metricsSecure  bool
	metricsCertDir string
	healthAddr     string
	leaderElect    bool
	leaderNS       string
	interval       time.Duration
	resync         time.Duration
	grace          time.Duration
	preemption     bool
	reservations   bool
	seed           int64
	maxAttempts    int
	headOrder      string
	requeue        engine.RequeuePolicy
	qps            float32
	burst          int
	// dashboardAddr serves the web dashboard; "0" or empty: off.
	dashboardAddr  string
	nodeLostAfter  time.Duration
	webhookPort    int
	webhookCertDir string
	// podsReady is Kueue's waitForPodsReady, from flags over --kueue-config's
	// Configuration (controller_podsready.go).
	podsReady   podsReadyFlags
	kueueConfig string
}

func newControllerCommand() *cobra.Command {
	var f controllerFlags
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run Gantry as the queue admission controller and gang scheduler of a cluster",
		Long: `Run Gantry against a Kubernetes API server: Jobs labelled with gantry.dev/queue-name or
kueue.x-k8s.io/queue-name become Workloads, the engine admits and places them, and pods
with schedulerName "gantry" are bound with their GPU devices in the gantry.dev/devices
annotation. Without --kubeconfig the in-cluster configuration is used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runController(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty means in-cluster")
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", `address of /metrics ("0" disables)`)
	fl.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve /metrics over HTTPS to callers the API server authenticates and authorizes for GET /metrics (false: plain HTTP to anyone)")
	fl.IntVar(&f.webhookPort, "webhook-port", 0, "serve the admission webhooks (suspend queued Jobs on create, validate queue objects) on this port; 0: off")
	fl.StringVar(&f.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory with the webhooks' tls.crt and tls.key (cert-manager's Secret, mounted)")
	fl.StringVar(&f.metricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for /metrics (empty: a self-signed certificate)")
	fl.StringVar(&f.healthAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fl.StringVar(&f.dashboardAddr, "dashboard-bind-address", "0", `address of the web dashboard ("0" disables; a port alone means 127.0.0.1)`)
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect one active replica through a Lease")
	fl.StringVar(&f.leaderNS, "leader-election-namespace", "", "namespace of the Lease (default: the pod's)")
	fl.DurationVar(&f.interval, "interval", 200*time.Millisecond, "least time between two passes (passes are triggered by watched changes; faster changes are coalesced)")
	fl.DurationVar(&f.nodeLostAfter, "node-lost-after", 5*time.Minute, "requeue the gangs on a node NotReady for this long (deleted nodes and untolerated NoExecute taints: at once)")
	fl.DurationVar(&f.resync, "resync", 30*time.Second, "run a pass at least this often even when no change was observed (safety net)")
	// The defaults are the engine's default policy, the one `gantry simulate` runs, so the
	// same objects get the same decisions on a cluster as in a simulation.
	def := engine.DefaultPolicy()
	fl.DurationVar(&f.grace, "grace", def.Grace, "notice a preempted workload gets before eviction")
	fl.BoolVar(&f.preemption, "preemption", def.Preemption, "let the engine preempt")
	fl.BoolVar(&f.reservations, "reservations", def.Reservations, "let large gangs reserve capacity (backfill)")
	fl.Int64Var(&f.seed, "seed", def.Seed, "seed for tie-breaking (as gantry simulate --seed)")
	fl.IntVar(&f.maxAttempts, "max-attempts", 0, "pending workloads tried per pass (0 = all)")
	fl.StringVar(&f.headOrder, "head-order", string(engine.HeadOrderPriority), headOrderHelp)
	requeueFlags(fl, &f.requeue)
	f.podsReady.registerConfig(fl)
	fl.StringVar(&f.kueueConfig, "kueue-config", "", "a Kueue Configuration (config.kueue.x-k8s.io) file whose waitForPodsReady the controller runs, read as simulate reads it; --pods-ready-* flags given win")
	fl.Float32Var(&f.qps, "kube-api-qps", controller.DefaultQPS, "API requests per second (binding a large gang is one request per pod)")
	fl.IntVar(&f.burst, "kube-api-burst", controller.DefaultBurst, "API request burst")
	return cmd
}

func runController(cmd *cobra.Command, f controllerFlags) error {
	if f.interval <= 0 {
		return fmt.Errorf("--interval %s: must be positive", f.interval)
	}
	if f.resync <= 0 {
		return fmt.Errorf("--resync %s: must be positive", f.resync)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %q: %w", f.kubeconfig, err)
	}
	if f.qps <= 0 || f.burst <= 0 {
		return fmt.Errorf("--kube-api-qps %v / --kube-api-burst %d: must be positive", f.qps, f.burst)
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	podsReady, err := f.podsReadyConfig()
	if err != nil {
		return err
	}
	order, err := parseHeadOrder(f.headOrder)
	if err != nil {
		return err
	}
	log := logr.FromSlogHandler(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
	ctrl.SetLogger(log)
	mgr, _, err := controller.NewManager(cfg, controller.ManagerOptions{
		Controller: controller.Options{
			Engine:   engine.Config{Preemption: f.preemption, Reservations: f.reservations, Grace: f.grace, MaxAttempts: f.maxAttempts, Requeue: f.requeue, HeadOrder: order},
			Interval: f.interval, Resync: f.resync, Seed: f.seed, NodeLostAfter: f.nodeLostAfter, PodsReady: podsReady,
		},
		MetricsAddr: f.metricsAddr, HealthAddr: f.healthAddr, MetricsSecure: f.metricsSecure, MetricsCertDir: f.metricsCertDir,
		WebhookPort: f.webhookPort, WebhookCertDir: f.webhookCertDir,
		LeaderElection: f.leaderElect, LeaderElectionNamespace: f.leaderNS, Log: log,
	})
	if err != nil {
		return err
	}
	if f.dashboardAddr != "" && f.dashboardAddr != "0" {
		dash, err := controllerDashboard(f.dashboardAddr, mgr.GetClient(), cfg.Host)
		if err != nil {
			return err
		}
		if err := mgr.Add(dash); err != nil {
			return fmt.Errorf("--dashboard-bind-address: %w", err)
		}
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

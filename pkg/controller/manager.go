package controller

import (
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// ManagerOptions configure the process around the controller.
type ManagerOptions struct {
	Controller Options
	// MetricsAddr serves /metrics ("0" disables); HealthAddr serves /healthz and /readyz.
	MetricsAddr string
	HealthAddr  string
	// MetricsSecure serves /metrics over HTTPS to callers the API server authenticates
	// (TokenReview) and authorizes for GET on the non-resource URL /metrics
	// (SubjectAccessReview), controller-runtime's secure serving. The certificate is
	// MetricsCertDir's tls.crt and tls.key, or a self-signed one when that is empty.
	MetricsSecure  bool
	MetricsCertDir string
	// WebhookPort serves the admission webhooks (webhook.go) over HTTPS on
	// WebhookHost:WebhookPort with WebhookCertDir's tls.crt and tls.key (cert-manager's
	// Certificate, or any Secret mounted there); 0: no webhooks.
	WebhookPort    int
	WebhookHost    string
	WebhookCertDir string
	// LeaderElection makes replicas elect one active controller through a Lease in
	// LeaderElectionNamespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	Log                     logr.Logger
	// Registry receives the metrics; nil means controller-runtime's, which the manager
	// serves on MetricsAddr. Tests that start several managers pass their own.
	Registry prometheus.Registerer
}

// DefaultQPS and DefaultBurst limit the controller's API requests when the rest config
// sets no limit (client-go's own default, 5 per second, would throttle a scheduler):
// binding a gang is a request per pod, and passes read no lists, so nearly every
// request is a write that moves work forward.
const (
	DefaultQPS   = 1000
	DefaultBurst = 2000
)

// NewManager builds a controller-runtime manager running Gantry's controller, with
// metrics, health probes and optional leader election. Start it with mgr.Start(ctx).
// A cfg without QPS or Burst gets DefaultQPS and DefaultBurst.
func NewManager(cfg *rest.Config, o ManagerOptions) (ctrl.Manager, *Controller, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  o.Log,
		Metrics:                 metricsOptions(o),
		WebhookServer:           webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir}),
		HealthProbeBindAddress:  o.HealthAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        "gantry-controller.gantry.dev",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// A leader that stops (a rolling update, SIGTERM) hands the Lease back, so the
		// standby takes over within a retry period instead of a lease duration; the
		// process exits right after the manager returns, as `gantry controller` does.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("controller: manager: %w", err)
	}
	reg := o.Registry
	if reg == nil {
		reg = metrics.Registry
	}
	m, err := NewMetrics(reg)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: metrics: %w", err)
	}
	c, err := New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("gantry"), m, o.Log.WithName("gantry"), o.Controller)
	if err != nil {
		return nil, nil, err
	}
	c.watch.informers = mgr.GetCache()
	c.podWebhook = o.WebhookPort > 0
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: discovery client: %w", err)
	}
	c.watch.discovery = dc
	if err := mgr.Add(c); err != nil {
		return nil, nil, err
	}
	if o.WebhookPort > 0 {
		registerWebhooks(mgr) // served by every replica, leader or not
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, nil, err
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("informer cache not synced")
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return mgr, c, nil
}

// metricsOptions is how the manager serves /metrics: plain HTTP, or secure serving
// behind the API server's authentication and authorization.
func metricsOptions(o ManagerOptions) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
		opts.CertDir = o.MetricsCertDir
	}
	return opts
}

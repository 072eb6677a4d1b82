package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	routeclientset "github.com/openshift/client-go/route/clientset/versioned"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/haroute/haroute/sync/source"
	"github.com/haroute/haroute/sync/status"
)

// manifestCacheDir is where the folder source keeps the content last in force of every manifest file,
// under the HAProxy directory (beside conf/, router/ and run/, on the volume that outlives a restart
// of haroute's container): after a restart, a file that does not decode keeps the objects it had.
const manifestCacheDir = "haroute/manifests-cache"

// newSource returns the folder or cluster source of rc, and the queue that writes Route status (nil
// when status is not written: folder mode, or --update-status=false); the caller runs both. The
// folder source of a router (rc.dir set) keeps its manifest cache under rc.dir; the inspection
// commands (no rc.dir) read the folder alone.
func (a *app) newSource(rc runConfig) (source.Source, *status.Queue, kubernetes.Interface, error) {
	if rc.manifests != "" {
		src := source.NewFolder(rc.manifests, a.log)
		if rc.dir != "" {
			src.SetCacheDir(filepath.Join(rc.dir, filepath.FromSlash(manifestCacheDir)))
		}
		return src, nil, nil, nil
	}
	var cfg *rest.Config
	var err error
	if rc.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", rc.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cluster configuration (use --kubeconfig, or --manifests for a folder): %w", err)
	}
	cfg.UserAgent = "haroute/" + version
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	routes, err := routeclientset.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("route client: %w", err)
	}
	// client-go logs through klog; send it to the same logger.
	klog.SetSlogLogger(a.log)
	opts := rc.settings.opts
	src := source.NewCluster(kube, routes, source.ClusterOptions{
		RouteLabels:     opts.RouteLabels,
		NamespaceLabels: opts.NamespaceLabels,
		Log:             a.log,
	})
	if !rc.updateStatus {
		return src, nil, kube, nil
	}
	// Status writes get a client of their own: the informers' keeps client-go's default limit (5 QPS),
	// which held a thousand status writes back for minutes. The queue paces the writes; its client
	// allows twice that rate, so that client-go's limiter is never what holds status back and the
	// re-reads after conflicts fit too.
	pace := status.QueueOptions{QPS: status.DefaultQPS, Burst: status.DefaultBurst}
	statusCfg := rest.CopyConfig(cfg)
	statusCfg.QPS = 2 * pace.QPS
	statusCfg.Burst = 2 * pace.Burst
	statusRoutes, err := routeclientset.NewForConfig(statusCfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("route status client: %w", err)
	}
	w := status.NewWriter(statusRoutes, opts.RouterName, rc.canonicalHostname, a.log)
	return src, status.NewQueue(w, pace), kube, nil
}

// waitSynced waits until src has its first complete snapshot (true), or ctx ends (false).
func (a *app) waitSynced(ctx context.Context, src source.Source) bool {
	t := time.NewTicker(syncPollInterval)
	defer t.Stop()
	logAt := time.Now().Add(syncWaitLogInterval)
	for !src.HasSynced() {
		select {
		case <-ctx.Done():
			return false
		case now := <-t.C:
			if now.After(logAt) {
				a.log.Info("waiting for the first complete snapshot of the source")
				logAt = now.Add(syncWaitLogInterval)
			}
		}
	}
	return true
}

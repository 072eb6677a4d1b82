package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	routeclientset "github.com/openshift/client-go/route/clientset/versioned"
	routeinformers "github.com/openshift/client-go/route/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/haroute/haroute/mapping"
)

// ClusterOptions configure a Cluster source.
type ClusterOptions struct {
	// RouteLabels (ROUTE_LABELS) restricts the Routes watched; nil or empty watches all of them.
	RouteLabels labels.Selector
	// NamespaceLabels (NAMESPACE_LABELS): when set, Namespaces matching it are watched (Translate
	// needs them to shard Routes); when nil, no Namespace is watched.
	NamespaceLabels labels.Selector
	// Resync is the informers' resync period; 0 disables resyncs.
	Resync time.Duration
	// Log receives debug messages about Secret watches; nil discards them.
	Log *slog.Logger
}

// Cluster is a Source backed by client-go shared informers: Routes, Services, EndpointSlices,
// Namespaces (only with NamespaceLabels) and, watched one by one, the Secrets that Routes reference
// through spec.tls.externalCertificate. Create it with NewCluster and call Run once.
type Cluster struct {
	kube    kubernetes.Interface
	opts    ClusterOptions
	log     *slog.Logger
	changes chan struct{}
	// secretsDirty (buffer 1) tells Run that the Routes changed, so the set of watched Secrets may too.
	secretsDirty chan struct{}
	running      atomic.Bool
	initErr      error // a registration that failed in NewCluster; Run returns it

	kubeFactory  informers.SharedInformerFactory
	nsFactory    informers.SharedInformerFactory // nil without NamespaceLabels
	routeFactory routeinformers.SharedInformerFactory

	routes     cache.SharedIndexInformer
	services   cache.SharedIndexInformer
	slices     cache.SharedIndexInformer
	namespaces cache.SharedIndexInformer // nil without NamespaceLabels

	mu      sync.Mutex
	secrets map[secretRef]*secretWatch // the Secret watches in force; changed only by Run
}

// secretRef names one Secret a Route references.
type secretRef struct{ namespace, name string }

func (r secretRef) key() string { return r.namespace + "/" + r.name }

// secretWatch is the small informer of one referenced Secret.
type secretWatch struct {
	informer cache.SharedIndexInformer
	stop     chan struct{} // closed to stop the informer
	done     chan struct{} // closed when the informer's goroutine has returned
}

var _ Source = (*Cluster)(nil)

// NewCluster returns a source reading from kube and routes. It only sets up the informers; Run starts
// them. A nil or empty opts.RouteLabels watches every Route.
func NewCluster(kube kubernetes.Interface, routes routeclientset.Interface, opts ClusterOptions) *Cluster {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{
		kube:         kube,
		opts:         opts,
		log:          log,
		changes:      make(chan struct{}, 1),
		secretsDirty: make(chan struct{}, 1),
		secrets:      map[secretRef]*secretWatch{},
	}

	var routeOpts []routeinformers.SharedInformerOption
	if sel := opts.RouteLabels; sel != nil && !sel.Empty() {
		s := sel.String()
		routeOpts = append(routeOpts, routeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = s
		}))
	}
	c.routeFactory = routeinformers.NewSharedInformerFactoryWithOptions(routes, opts.Resync, routeOpts...)
	c.kubeFactory = informers.NewSharedInformerFactoryWithOptions(kube, opts.Resync)
	c.routes = c.routeFactory.Route().V1().Routes().Informer()
	c.services = c.kubeFactory.Core().V1().Services().Informer()
	c.slices = c.kubeFactory.Discovery().V1().EndpointSlices().Informer()
	if sel := opts.NamespaceLabels; sel != nil {
		s := sel.String()
		c.nsFactory = informers.NewSharedInformerFactoryWithOptions(kube, opts.Resync,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = s }))
		c.namespaces = c.nsFactory.Core().V1().Namespaces().Informer()
	}

	var errs []error
	routeHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.routesChanged() },
		UpdateFunc: func(any, any) { c.routesChanged() },
		// A tombstone (cache.DeletedFinalStateUnknown) needs no unwrapping: the event is only a signal.
		DeleteFunc: func(any) { c.routesChanged() },
	}
	if _, err := c.routes.AddEventHandler(routeHandler); err != nil {
		errs = append(errs, fmt.Errorf("watching Routes: %w", err))
	}
	others := []struct {
		kind string
		inf  cache.SharedIndexInformer
	}{{"Services", c.services}, {"EndpointSlices", c.slices}, {"Namespaces", c.namespaces}}
	for _, o := range others {
		if o.inf == nil {
			continue
		}
		if _, err := o.inf.AddEventHandler(c.signalHandler()); err != nil {
			errs = append(errs, fmt.Errorf("watching %s: %w", o.kind, err))
		}
	}
	c.initErr = errors.Join(errs...)
	return c
}

// signalHandler signals Changes on every add, update and delete (including a delete delivered as a
// cache.DeletedFinalStateUnknown tombstone).
func (c *Cluster) signalHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.signal() },
		UpdateFunc: func(any, any) { c.signal() },
		DeleteFunc: func(any) { c.signal() },
	}
}

// signal sends on Changes without blocking; a pending value already stands for this change.
func (c *Cluster) signal() {
	select {
	case c.changes <- struct{}{}:
	default:
	}
}

// routesChanged signals Changes and asks Run to re-check the Secret watches.
func (c *Cluster) routesChanged() {
	c.signal()
	select {
	case c.secretsDirty <- struct{}{}:
	default:
	}
}

// Changes returns a channel that receives a value after any watched object was added, updated or
// deleted, and once when Run has synced every cache. Values coalesce (buffer 1).
func (c *Cluster) Changes() <-chan struct{} { return c.changes }

// HasSynced reports whether every started informer has synced, including a Secret watch for every
// Secret that a watched Route references.
func (c *Cluster) HasSynced() bool {
	for _, inf := range c.informers() {
		if !inf.HasSynced() {
			return false
		}
	}
	want := c.referencedSecrets()
	c.mu.Lock()
	defer c.mu.Unlock()
	for ref := range want {
		w, ok := c.secrets[ref]
		if !ok || !w.informer.HasSynced() {
			return false
		}
	}
	return true
}

// informers returns the factory informers in use.
func (c *Cluster) informers() []cache.SharedIndexInformer {
	infs := []cache.SharedIndexInformer{c.routes, c.services, c.slices}
	if c.namespaces != nil {
		infs = append(infs, c.namespaces)
	}
	return infs
}

// Snapshot returns the cached objects themselves, each kind sorted by namespace and name: read-only,
// like everything an informer's store hands out (an update replaces the cached object by a new one,
// so an object that did not change keeps its pointer from one snapshot to the next, which lets
// mapping.Translator skip it). Only Routes matching RouteLabels, Namespaces matching NamespaceLabels
// and referenced Secrets are included. The FileError list is always nil: a cluster has no files.
func (c *Cluster) Snapshot() (mapping.Input, []FileError) {
	var in mapping.Input
	for _, obj := range c.routes.GetStore().List() {
		r, ok := obj.(*routev1.Route)
		if ok && c.routeSelected(r) {
			in.Routes = append(in.Routes, r)
		}
	}
	for _, obj := range c.services.GetStore().List() {
		if s, ok := obj.(*corev1.Service); ok {
			in.Services = append(in.Services, s)
		}
	}
	for _, obj := range c.slices.GetStore().List() {
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			in.EndpointSlices = append(in.EndpointSlices, s)
		}
	}
	if c.namespaces != nil {
		for _, obj := range c.namespaces.GetStore().List() {
			n, ok := obj.(*corev1.Namespace)
			if ok && c.opts.NamespaceLabels.Matches(labels.Set(n.Labels)) {
				in.Namespaces = append(in.Namespaces, n)
			}
		}
	}
	c.mu.Lock()
	for ref, w := range c.secrets {
		// The store holds what the list options selected; the key lookup also keeps out any other
		// Secret of the namespace should a server (or a fake) ignore the field selector.
		obj, exists, err := w.informer.GetStore().GetByKey(ref.key())
		if err != nil || !exists {
			continue
		}
		if s, ok := obj.(*corev1.Secret); ok {
			in.Secrets = append(in.Secrets, s)
		}
	}
	c.mu.Unlock()

	slices.SortFunc(in.Routes, byMeta[*routev1.Route])
	slices.SortFunc(in.Services, byMeta[*corev1.Service])
	slices.SortFunc(in.EndpointSlices, byMeta[*discoveryv1.EndpointSlice])
	slices.SortFunc(in.Namespaces, byMeta[*corev1.Namespace])
	slices.SortFunc(in.Secrets, byMeta[*corev1.Secret])
	return in, nil
}

// byMeta orders objects by namespace, then name.
func byMeta[T metav1.Object](a, b T) int {
	return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
}

// routeSelected reports whether r matches RouteLabels. The list options already select on the
// server; this keeps the contract even when a watch does not honour the selector.
func (c *Cluster) routeSelected(r *routev1.Route) bool {
	sel := c.opts.RouteLabels
	return sel == nil || sel.Matches(labels.Set(r.Labels))
}

// referencedSecrets returns the Secrets the selected cached Routes reference.
func (c *Cluster) referencedSecrets() map[secretRef]bool {
	want := map[secretRef]bool{}
	for _, obj := range c.routes.GetStore().List() {
		r, ok := obj.(*routev1.Route)
		if !ok || !c.routeSelected(r) {
			continue
		}
		if tls := r.Spec.TLS; tls != nil && tls.ExternalCertificate != nil && tls.ExternalCertificate.Name != "" {
			want[secretRef{namespace: r.Namespace, name: tls.ExternalCertificate.Name}] = true
		}
	}
	return want
}

// Run starts the informers, waits (as long as ctx allows) for their caches, signals Changes once they
// have synced, then keeps one Secret watch per referenced Secret until ctx ends. It stops every
// informer before it returns: nil when ctx ended, an error if the informers could not be set up. Run
// may be called once.
func (c *Cluster) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("cluster source: Run called twice")
	}
	if c.initErr != nil {
		return fmt.Errorf("cluster source: %w", c.initErr)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		// The factories' goroutines end only once their stop channel (ctx.Done) is closed.
		cancel()
		c.stopSecretWatches()
		c.routeFactory.Shutdown()
		c.kubeFactory.Shutdown()
		if c.nsFactory != nil {
			c.nsFactory.Shutdown()
		}
	}()
	stop := ctx.Done()
	c.routeFactory.Start(stop)
	c.kubeFactory.Start(stop)
	if c.nsFactory != nil {
		c.nsFactory.Start(stop)
	}

	var synced []cache.InformerSynced
	for _, inf := range c.informers() {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(stop, synced...) {
		return nil // ctx ended first
	}
	// The Secrets of the Routes just listed; then wait until their watches have synced too.
	if err := c.syncSecretWatches(); err != nil {
		return err
	}
	if !cache.WaitForCacheSync(stop, c.HasSynced) {
		return nil
	}
	c.log.Debug("cluster caches synced")
	c.signal()

	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.secretsDirty:
			if err := c.syncSecretWatches(); err != nil {
				return err
			}
		}
	}
}

// syncSecretWatches starts a watch for every newly referenced Secret and stops the watches of Secrets
// no Route references any more (signalling Changes, as those Secrets leave the snapshot).
func (c *Cluster) syncSecretWatches() error {
	want := c.referencedSecrets()
	var stopped []*secretWatch
	var errs []error
	c.mu.Lock()
	for ref, w := range c.secrets {
		if !want[ref] {
			delete(c.secrets, ref)
			stopped = append(stopped, w)
			c.log.Debug("stopped watching a Secret", "namespace", ref.namespace, "name", ref.name)
		}
	}
	for ref := range want {
		if _, ok := c.secrets[ref]; ok {
			continue
		}
		w, err := c.startSecretWatch(ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.secrets[ref] = w
		c.log.Debug("watching a Secret", "namespace", ref.namespace, "name", ref.name)
	}
	c.mu.Unlock()
	for _, w := range stopped {
		close(w.stop)
		<-w.done
	}
	if len(stopped) > 0 {
		c.signal()
	}
	return errors.Join(errs...)
}

// startSecretWatch starts an informer for the one Secret ref (field selector metadata.name in its
// namespace). It signals Changes on its events and once it has synced, so a Secret that does not
// exist (yet) is also reported.
func (c *Cluster) startSecretWatch(ref secretRef) (*secretWatch, error) {
	selector := fields.OneTermEqualSelector("metadata.name", ref.name).String()
	inf := coreinformers.NewFilteredSecretInformer(c.kube, ref.namespace, c.opts.Resync, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = selector })
	if _, err := inf.AddEventHandler(c.signalHandler()); err != nil {
		return nil, fmt.Errorf("watching Secret %s: %w", ref.key(), err)
	}
	w := &secretWatch{informer: inf, stop: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(w.stop) })
	wg.Go(func() {
		if cache.WaitForCacheSync(w.stop, inf.HasSynced) {
			c.signal()
		}
	})
	go func() {
		wg.Wait()
		close(w.done)
	}()
	return w, nil
}

// stopSecretWatches stops every Secret watch and waits for their goroutines.
func (c *Cluster) stopSecretWatches() {
	c.mu.Lock()
	watches := c.secrets
	c.secrets = map[secretRef]*secretWatch{}
	c.mu.Unlock()
	for _, w := range watches {
		close(w.stop)
	}
	for _, w := range watches {
		<-w.done
	}
}

//go:build e2e

package framework

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/manifests"
)

// fieldManager names the e2e suite in the managed fields of what it applies.
const fieldManager = "haroute-e2e"

// applier applies rendered objects with the admin's rights, the way `kubectl apply --server-side`
// does: a server-side apply patch, with strict field validation (a field the schema does not know is
// an error, not a warning).
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func (c *Cluster) newApplier() (*applier, error) {
	cfg := c.restConfig(c.adminToken)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// apply applies o; with dryRun the API server runs every admission and validation step and stores
// nothing.
func (a *applier) apply(ctx context.Context, o manifests.Object, dryRun bool) error {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
	}
	m, err := a.mapper.RESTMapping(gv.WithKind(o.Kind).GroupKind(), gv.Version)
	if err != nil {
		return fmt.Errorf("%s %s: the API server does not serve it: %w", o.Kind, o.Name, err)
	}
	body, err := yaml.YAMLToJSON(o.YAML)
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force, FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	res := a.dyn.Resource(m.Resource)
	var ri dynamic.ResourceInterface = res
	if o.Namespace != "" {
		ri = res.Namespace(o.Namespace)
	}
	if _, err := ri.Patch(ctx, o.Name, types.ApplyPatchType, body, opts); err != nil {
		return fmt.Errorf("apply %s %s/%s (dry run %v): %w", o.Kind, o.Namespace, o.Name, dryRun, err)
	}
	return nil
}

// DryRunVariant applies every object of a rendered variant with a server-side dry run (schemas,
// defaulting, admission, RBAC escalation checks; nothing stored), after creating its Namespaces for
// real (the namespaced objects' dry run needs them). It returns how many objects passed, and every
// refusal.
func (c *Cluster) DryRunVariant(ctx context.Context, variant string) (int, []error) {
	objs, err := manifests.Render(variant)
	if err != nil {
		return 0, []error{err}
	}
	a, err := c.newApplier()
	if err != nil {
		return 0, []error{err}
	}
	var errs []error
	for _, o := range objs {
		if o.Kind == "Namespace" {
			if err := a.apply(ctx, o, false); err != nil {
				return 0, []error{err}
			}
		}
	}
	n := 0
	for _, o := range objs {
		if err := a.apply(ctx, o, true); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errs
}

// DryRunObject applies one object with a server-side dry run.
func (c *Cluster) DryRunObject(ctx context.Context, o manifests.Object) error {
	a, err := c.newApplier()
	if err != nil {
		return err
	}
	return a.apply(ctx, o, true)
}

package controller

import (
	"reflect"
	"slices"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// sameConfig reports whether two desired states are equal: every part compared by value, with a
// nil list equal to an empty one. It runs on every sync, so the big lists are compared without
// allocating, and lists that are the very same (mapping.Translator hands on what did not change)
// compare at once.
func sameConfig(a, b *model.Config) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return reflect.DeepEqual(a.Settings, b.Settings) && reflect.DeepEqual(a.Frontends, b.Frontends) &&
		slices.Equal(a.Routes, b.Routes) &&
		slices.EqualFunc(a.Maps, b.Maps, func(x, y model.MapFile) bool {
			return x.Name == y.Name && slices.Equal(x.Entries, y.Entries)
		}) &&
		(same(a.Certificates, b.Certificates) || reflect.DeepEqual(a.Certificates, b.Certificates)) &&
		slices.Equal(a.CAFiles, b.CAFiles) && a.Listener == b.Listener &&
		slices.EqualFunc(a.Backends, b.Backends, (*model.Backend).Equal)
}

// same reports whether a and b are the very same list (same array, same length).
func same[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// delta summarises a desired state and how it differs from the previous one.
type delta struct {
	routes, backends, servers                      int
	routesChanged, backendsChanged, serversChanged int
}

// diff counts the Routes, backends and servers of next, and those added, removed or changed since
// prev (nil: everything is new). Both lists are sorted (model.Config: Routes by namespace and name,
// backends by name), so one merge walk pairs them.
func diff(prev, next *model.Config) delta {
	var d delta
	if next == nil {
		return d
	}
	if prev == nil {
		prev = &model.Config{}
	}
	d.routes = len(next.Routes)
	d.backends = len(next.Backends)
	d.routesChanged = mergeCount(prev.Routes, next.Routes,
		func(a, b model.RouteInfo) int {
			if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		},
		func(a, b *model.RouteInfo) int {
			if *a != *b {
				return 1
			}
			return 0
		}, func(*model.RouteInfo) int { return 1 })
	for i := range next.Backends {
		d.servers += len(next.Backends[i].Servers)
	}
	d.backendsChanged = mergeCount(prev.Backends, next.Backends,
		func(a, b *model.Backend) int { return strings.Compare(a.Name, b.Name) },
		func(a, b **model.Backend) int {
			if (*a).Equal(*b) {
				return 0
			}
			d.serversChanged += serverDelta((*a).Servers, (*b).Servers)
			return 1
		}, func(b **model.Backend) int {
			d.serversChanged += len((*b).Servers)
			return 1
		})
	return d
}

// mergeCount walks two lists sorted by cmp and sums changed(a, b) over the pairs with the same key
// and alone(x) over the elements found on one side only.
func mergeCount[T any](prev, next []T, cmp func(a, b T) int, changed func(a, b *T) int, alone func(*T) int) int {
	n, i, j := 0, 0, 0
	for i < len(prev) || j < len(next) {
		switch {
		case j == len(next) || (i < len(prev) && cmp(prev[i], next[j]) < 0):
			n += alone(&prev[i])
			i++
		case i == len(prev) || cmp(prev[i], next[j]) > 0:
			n += alone(&next[j])
			j++
		default:
			n += changed(&prev[i], &next[j])
			i++
			j++
		}
	}
	return n
}

// serverDelta counts servers added, removed or changed between two lists sorted by name.
func serverDelta(prev, next []model.Server) int {
	return mergeCount(prev, next,
		func(a, b model.Server) int { return strings.Compare(a.Name, b.Name) },
		func(a, b *model.Server) int {
			if *a != *b {
				return 1
			}
			return 0
		}, func(*model.Server) int { return 1 })
}

package socket

import (
	"reflect"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"2.6.12-1+deb12u4": {2, 6, 12, "2.6.12-1+deb12u4"},
		"3.0.11-1+deb13u4": {3, 0, 11, "3.0.11-1+deb13u4"},
		"3.2.26-1":         {3, 2, 26, "3.2.26-1"},
		" 3.4.7-1 ":        {3, 4, 7, "3.4.7-1"},
		"3.5-dev3":         {3, 5, 0, "3.5-dev3"},
		"2.7.0":            {2, 7, 0, "2.7.0"},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "HAProxy", "3", "x.y", "1.2.3.4"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want an error", bad, v)
		}
	}
}

// TestCapabilitiesOf pins the version thresholds checked on Debian's 2.6.12, 3.0.11, 3.2.26 and
// 3.4.7 (and the 2.7 / 3.1 changes named in HAProxy's documentation).
func TestCapabilitiesOf(t *testing.T) {
	type caps struct{ sync, ready, oldList, cookie, enabled, nothing, delOne, large bool }
	get := func(c Capabilities) caps {
		return caps{c.SyncReload, c.ReadyGatedReload, c.FailedReloadKeepsOldList, c.AddServerCookie,
			c.AddServerRefusesEnabled, c.NothingChangedReply, c.DelMapDeletesOne, c.LargePayloads}
	}
	for v, want := range map[string]caps{
		"2.6.12": {},
		"2.7.0":  {sync: true},
		"3.0.11": {sync: true, cookie: true, enabled: true, nothing: true},
		"3.1.0":  {sync: true, ready: true, oldList: true, cookie: true, enabled: true, nothing: true},
		"3.2.26": {sync: true, ready: true, oldList: true, cookie: true, enabled: true, nothing: true},
		"3.4.7":  {true, true, true, true, true, true, true, true},
	} {
		pv, err := ParseVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		c := CapabilitiesOf(pv)
		if got := get(c); !reflect.DeepEqual(got, want) || c.Version != pv {
			t.Errorf("CapabilitiesOf(%s) = %+v, want %+v", v, got, want)
		}
	}
}

// TestSafeBackendDeletion: runtime backends need 3.4.4, whose changelog protects the dumps against
// `del backend` (3.4.3) and fixes the deletion of the first backend (3.4.4).
func TestSafeBackendDeletion(t *testing.T) {
	for v, want := range map[string]bool{"3.2.26": false, "3.4.0": false, "3.4.3": false, "3.4.4": true, "3.4.7": true, "3.5.0": true, "4.0.0": true} {
		pv, err := ParseVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		if c := CapabilitiesOf(pv); c.SafeBackendDeletion != want || c.DynamicBackends != pv.AtLeast(3, 4) {
			t.Errorf("%s: SafeBackendDeletion %v, DynamicBackends %v", v, c.SafeBackendDeletion, c.DynamicBackends)
		}
	}
}

package layout_test

import (
	"path"
	"path/filepath"
	"testing"

	"github.com/haroute/haroute/mapping/layout"
)

// names are every relative name of the package, with the method that makes it absolute.
var names = map[string]func(layout.Layout) string{
	layout.ConfDir:            layout.Layout.ConfDir,
	layout.BackendsDir:        layout.Layout.BackendsDir,
	layout.CertDir:            layout.Layout.CertDir,
	layout.CADir:              layout.Layout.CADir,
	layout.RunDir:             layout.Layout.RunDir,
	layout.Config:             layout.Layout.Config,
	layout.DefaultCertificate: layout.Layout.DefaultCertificate,
	layout.ClientCA:           layout.Layout.ClientCA,
	layout.ClientCRL:          layout.Layout.ClientCRL,
	layout.ErrorPage503:       layout.Layout.ErrorPage503,
	layout.ErrorPage404:       layout.Layout.ErrorPage404,
	layout.AdminSocket:        layout.Layout.AdminSocket,
	layout.MasterSocket:       layout.Layout.MasterSocket,
	layout.StatsSocket:        layout.Layout.StatsSocket,
	layout.SNISocket:          layout.Layout.SNISocket,
	layout.NoSNISocket:        layout.Layout.NoSNISocket,
	layout.StateSocket:        layout.Layout.StateSocket,
	layout.DeletionLock:       layout.Layout.DeletionLock,
}

// TestNamesAreLocal: every name is a clean relative path inside the directory, each method gives it
// under the directory, and the zero Layout gives it as it is. The map literal above already refuses
// two equal names.
func TestNamesAreLocal(t *testing.T) {
	const dir = "/var/lib/haproxy"
	l := layout.For(dir)
	for rel, abs := range names {
		if !filepath.IsLocal(rel) || path.Clean(rel) != rel {
			t.Errorf("%q is not a clean relative path", rel)
		}
		if got, want := abs(l), dir+"/"+rel; got != want {
			t.Errorf("%q under %s: %q, want %q", rel, dir, got, want)
		}
		if got := abs(layout.Layout{}); got != rel {
			t.Errorf("%q in the zero Layout: %q", rel, got)
		}
	}
	if l.Dir() != dir {
		t.Errorf("Dir() = %q", l.Dir())
	}
}

// TestFilesSitInTheirFolders: the sockets lie in RunDir, the configuration files in ConfDir, the
// deletion lock beside the admin socket and the default certificate is named DefaultCertificateName.
func TestFilesSitInTheirFolders(t *testing.T) {
	for _, s := range []string{layout.AdminSocket, layout.MasterSocket, layout.StatsSocket, layout.SNISocket,
		layout.NoSNISocket, layout.StateSocket, layout.DeletionLock} {
		if path.Dir(s) != layout.RunDir {
			t.Errorf("%s is not in %s", s, layout.RunDir)
		}
	}
	for _, f := range []string{layout.Config, layout.BackendsDir, layout.DefaultCertificate, layout.ClientCA,
		layout.ClientCRL, layout.ErrorPage503, layout.ErrorPage404, layout.InConf("x.map")} {
		if path.Dir(f) != layout.ConfDir {
			t.Errorf("%s is not in %s", f, layout.ConfDir)
		}
	}
	if path.Dir(layout.DeletionLock) != path.Dir(layout.AdminSocket) || path.Base(layout.DeletionLock) != layout.DeletionLockName {
		t.Errorf("the deletion lock %s is not %s beside %s", layout.DeletionLock, layout.DeletionLockName, layout.AdminSocket)
	}
	if path.Base(layout.DefaultCertificate) != layout.DefaultCertificateName {
		t.Errorf("%s is not named %s", layout.DefaultCertificate, layout.DefaultCertificateName)
	}
	if got := layout.For("/d").InConf("os_http_be.map"); got != "/d/conf/os_http_be.map" {
		t.Errorf("InConf: %q", got)
	}
}

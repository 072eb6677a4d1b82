package plan

import (
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// ListenerFile names one of the router-wide TLS files of model.ListenerFiles.
type ListenerFile string

// The listener files.
const (
	DefaultCertificateFile ListenerFile = "default certificate"
	ClientCAFile           ListenerFile = "client CA"
	ClientCRLFile          ListenerFile = "client CRL"
)

// SetListenerFile replaces the content of a listener file HAProxy already uses, the default
// certificate or the client CRLs: set ssl cert or set ssl crl-file with the new PEM, then its commit. Binds that use the file
// serve the new content from the next handshake.
type SetListenerFile struct {
	File ListenerFile
	PEM  string
}

func (SetListenerFile) isOp() {}

func (o SetListenerFile) String() string { return fmt.Sprintf("set %s (%d bytes)", o.File, len(o.PEM)) }

// ListenerChanged is the reason of a reload when a listener file appeared or went (model.ListenerFiles), which changes the lines of
// the terminating listeners (CRLs for client certificates, or a default certificate that was the
// renderer's), or the client CA bundle changed.
const ListenerChanged ReasonKind = "ListenerChanged"

// listenerReasons returns a ListenerChanged reason per listener file that is present on one side
// only, and one for a client CA bundle whose content changed: after `commit ssl ca-file` HAProxy
// (2.6, 3.2 and 3.4 checked, TestListenerFilesRotateWithoutReload) verifies client certificates
// against the new bundle but still names the old CAs in its certificate request, and clients that
// pick their certificate by those names (Go's, browsers asking the user) offer none for a new CA. The
// bundle's presence goes with the client-certificate settings (GlobalChanged already).
func listenerReasons(a, b *model.ListenerFiles) []Reason {
	var out []Reason
	if a.ClientCA != "" && b.ClientCA != "" && a.ClientCA != b.ClientCA {
		out = append(out, Reason{Kind: ListenerChanged, Subject: string(ClientCAFile), Detail: "content changed"})
	}
	for _, f := range []struct {
		file ListenerFile
		a, b string
	}{
		{DefaultCertificateFile, a.DefaultCertificate, b.DefaultCertificate},
		{ClientCRLFile, a.ClientCRL, b.ClientCRL},
	} {
		if (f.a == "") != (f.b == "") {
			detail := "added"
			if f.b == "" {
				detail = "removed"
			}
			out = append(out, Reason{Kind: ListenerChanged, Subject: string(f.file), Detail: detail})
		}
	}
	return out
}

// listenerOps returns a SetListenerFile per listener file whose content changed (present on both
// sides): the default certificate, then the CRLs. A changed client CA bundle is a reload
// (listenerReasons).
func listenerOps(a, b *model.ListenerFiles) []Op {
	var out []Op
	for _, f := range []struct {
		file ListenerFile
		a, b string
	}{
		{DefaultCertificateFile, a.DefaultCertificate, b.DefaultCertificate},
		{ClientCRLFile, a.ClientCRL, b.ClientCRL},
	} {
		if f.a != f.b && f.a != "" && f.b != "" {
			out = append(out, SetListenerFile{File: f.file, PEM: f.b})
		}
	}
	return out
}

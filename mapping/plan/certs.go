package plan

import (
	"slices"

	"github.com/haroute/haroute/mapping/model"
)

// caOps returns the CA file operations (Diff steps 1 and 6): sets (SetCAFile, New when from lacks the
// bundle) for new or changed bundles, and deletes for removed ones, each in name order.
func caOps(from, to []model.CAFile) (sets, dels []Op) {
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case j >= len(to) || (i < len(from) && from[i].Name < to[j].Name):
			dels = append(dels, DelCAFile{CA: from[i].Name})
			i++
		case i >= len(from) || to[j].Name < from[i].Name:
			sets = append(sets, SetCAFile{CA: to[j], New: true})
			j++
		default:
			if from[i].PEM != to[j].PEM {
				sets = append(sets, SetCAFile{CA: to[j]})
			}
			i++
			j++
		}
	}
	return sets, dels
}

// caFileReasons returns a CAFileChanged reason per CA bundle present in both lists (sorted by name)
// with another content: HAProxy's existing servers would keep verifying with the old one.
func caFileReasons(from, to []model.CAFile) []Reason {
	var out []Reason
	i, j := 0, 0
	for i < len(from) && j < len(to) {
		switch {
		case from[i].Name < to[j].Name:
			i++
		case to[j].Name < from[i].Name:
			j++
		default:
			if from[i].PEM != to[j].PEM {
				out = append(out, Reason{Kind: CAFileChanged, Subject: to[j].Name})
			}
			i++
			j++
		}
	}
	return out
}

// certOps returns the certificate and crt-list operations (Diff steps 2 and 6). adds holds every
// SetCertificate (New when from lacks it) for new or changed PEM, then the crt-list changes:
// AddCrtListEntry for a new certificate, DelCrtListEntry + AddCrtListEntry for a kept certificate
// whose SNI filter or ALPN changed. dels holds DelCrtListEntry + DelCertificate per removed
// certificate. Each group is in name order.
func certOps(from, to []model.Certificate) (adds, dels []Op) {
	var stores, lines []Op
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case j >= len(to) || (i < len(from) && from[i].Name < to[j].Name):
			dels = append(dels, DelCrtListEntry{Cert: from[i].Name}, DelCertificate{Cert: from[i].Name})
			i++
		case i >= len(from) || to[j].Name < from[i].Name:
			stores = append(stores, SetCertificate{Cert: to[j], New: true})
			lines = append(lines, AddCrtListEntry{Cert: to[j]})
			j++
		default:
			a, b := &from[i], &to[j]
			if a.PEM != b.PEM {
				stores = append(stores, SetCertificate{Cert: *b})
			}
			if a.ALPN != b.ALPN || !slices.Equal(a.SNI, b.SNI) {
				lines = append(lines, DelCrtListEntry{Cert: b.Name}, AddCrtListEntry{Cert: *b})
			}
			i++
			j++
		}
	}
	return append(stores, lines...), dels
}

package socket

import (
	"context"
	"fmt"
	"strings"
)

// HAProxy 2.6 holds at most one certificate transaction and one CA-file transaction at a time: `set
// ssl ca-file` of another path while one is open answers "The ongoing transaction is about …"
// (ErrBusy). `set ssl cert` of another path is worse (checked on 2.6.12): HAProxy loads the payload
// into the open transaction of the other path and answers "Transaction updated for certificate
// <other path>!"; SetCert reports ErrBusy and aborts that transaction. Commit (or abort) right after
// set.

// NewCert creates an empty certificate store (ErrExists when the path is loaded already).
// NewCert, SetCert (payload: PEM), CommitCert, AbortCert and DelCert manage an ssl cert by path.
func NewCert(ctx context.Context, r Runner, certPath string) error {
	cmd, err := line("new", "ssl", "cert", certPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtCertCreated, certPath))
}

// SetCert starts or updates the transaction of certPath with the PEM payload. Blank lines are
// dropped from the PEM (they would end the payload; PEM ignores them). ErrNotFound when the path is
// neither loaded nor created by NewCert; ErrBusy when the transaction of another path is open (see
// above: that transaction is aborted).
func SetCert(ctx context.Context, r Runner, certPath, pem string) error {
	cmd, err := line("set", "ssl", "cert", certPath)
	if err != nil {
		return err
	}
	payload, err := pemPayload(pem)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	reply, err := r.Payload(ctx, cmd, payload)
	if err != nil {
		return err
	}
	err = check(cmd+" <<", reply, fmt.Sprintf(fmtCertTxCreated, certPath), fmt.Sprintf(fmtCertTxUpdated, certPath))
	if other, ok := otherCertTransaction(reply, certPath); ok {
		// HAProxy 2.6.12 loaded our PEM into the open transaction of another path: abort it, so
		// that nobody commits our certificate under that path.
		abortErr := AbortCert(ctx, r, other)
		return &CommandError{Command: cmd + " <<", Reply: reply, Err: fmt.Errorf(
			"%w: the transaction of %s is open and HAProxy put this payload into it (aborting it: %v)", ErrBusy, other, abortErr)}
	}
	return err
}

// otherCertTransaction recognises HAProxy 2.6's answer to `set ssl cert A` while the transaction of
// another path B is open: "Transaction updated for certificate B!" (checked on 2.6.12; it loads A's
// payload into B's transaction).
func otherCertTransaction(reply, certPath string) (string, bool) {
	prefix, suffix, _ := strings.Cut(fmtCertTxUpdated, "%s")
	p, ok := strings.CutPrefix(trimReply(reply), prefix)
	if !ok {
		return "", false
	}
	p, ok = strings.CutSuffix(p, suffix)
	if !ok || p == certPath || p == "" || strings.Contains(p, "\n") {
		return "", false
	}
	return p, true
}

// CommitCert commits the transaction of certPath (ErrNotFound without one).
func CommitCert(ctx context.Context, r Runner, certPath string) error {
	return commitTransaction(ctx, r, "cert", certPath)
}

// AbortCert aborts the transaction of certPath (ErrNotFound without one).
func AbortCert(ctx context.Context, r Runner, certPath string) error {
	return abortTransaction(ctx, r, "cert", certPath)
}

// commitTransaction sends `commit ssl <kind> <path>` (kind: cert, ca-file, crl-file) and checks the
// answer.
func commitTransaction(ctx context.Context, r Runner, kind, path string) error {
	cmd, err := line("commit", "ssl", kind, path)
	if err != nil {
		return err
	}
	return expectCommit(ctx, r, cmd, path)
}

// abortTransaction sends `abort ssl <kind> <path>`; HAProxy answers the same for every kind.
func abortTransaction(ctx context.Context, r Runner, kind, path string) error {
	cmd, err := line("abort", "ssl", kind, path)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtAborted, path))
}

// DelCert deletes an unused certificate: ErrBusy while a crt-list line uses it, ErrNotFound when it
// does not exist.
func DelCert(ctx context.Context, r Runner, certPath string) error {
	cmd, err := line("del", "ssl", "cert", certPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtCertDeleted, certPath))
}

// expectCommit checks the answer of a commit: "Committing <path>", one "." per certificate
// instance HAProxy rebuilt (checked on 2.6.12: none for an unused certificate, one per crt-list
// line or bind using it), then "\nSuccess!".
func expectCommit(ctx context.Context, r Runner, cmd, path string) error {
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return err
	}
	head, tail, _ := strings.Cut(fmt.Sprintf(fmtCommitted, path), "\n")
	got, ok := strings.CutPrefix(trimReply(reply), head)
	if ok {
		got = strings.TrimLeft(got, ".")
		if got == "\n"+tail {
			return nil
		}
	}
	return classify(cmd, reply)
}

// pemPayload drops blank lines and carriage returns from a PEM bundle.
func pemPayload(pem string) (string, error) {
	var b strings.Builder
	for l := range strings.SplitSeq(strings.ReplaceAll(pem, "\r", ""), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("%w: empty PEM", ErrInvalid)
	}
	return b.String(), nil
}

// AddCrtListEntry adds one line ("<certPath> [alpn ...] <sni>...") to the crt-list. The line goes in
// a payload: on the command line HAProxy 2.6 takes the certificate path only and silently drops the
// options and SNI filters. The certificate must be loaded (ErrNotFound otherwise). HAProxy adds a
// second line for a certificate that has one already.
func AddCrtListEntry(ctx context.Context, r Runner, crtList, line string) error {
	cmd, err := commandLine("add", "ssl", "crt-list", crtList)
	if err != nil {
		return err
	}
	if strings.ContainsAny(line, "\n\r\x00;") {
		return fmt.Errorf("%s: %w: line %q holds a line break, NUL or ';'", cmd, ErrInvalid, line)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return fmt.Errorf("%s: %w: empty line", cmd, ErrInvalid)
	}
	return expectPayload(ctx, r, cmd, strings.Join(fields, " "), fmt.Sprintf(fmtCrtListAdded, fields[0], crtList))
}

// commandLine is line under another name (AddCrtListEntry's parameter shadows it).
func commandLine(words ...string) (string, error) { return line(words...) }

// DelCrtListEntry removes the crt-list line of certPath ("<path>:<line>" selects one of several
// lines of the same certificate). ErrNotFound when there is none; ErrUnsupported when the path holds
// a ':' of its own (2.6 cannot delete those entries at runtime).
func DelCrtListEntry(ctx context.Context, r Runner, crtList, certPath string) error {
	cmd, err := line("del", "ssl", "crt-list", crtList, certPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtCrtListDeleted, stripLineNumber(certPath), crtList))
}

// stripLineNumber removes a ":<digits>" suffix (HAProxy echoes the path without it).
func stripLineNumber(p string) string {
	i := strings.LastIndexByte(p, ':')
	if i < 0 || i == len(p)-1 {
		return p
	}
	for _, c := range p[i+1:] {
		if c < '0' || c > '9' {
			return p
		}
	}
	return p[:i]
}

// ShowCrtList returns the crt-list's lines (without comments), as the crt-list file writes them.
// HAProxy 2.6 prints an ALPN list with a stray NUL byte ("[alpn h2,http/1.1\x00]"); it is removed.
// ErrNotFound for an unknown crt-list.
func ShowCrtList(ctx context.Context, r Runner, crtList string) ([]string, error) {
	cmd, err := line("show", "ssl", "crt-list", crtList)
	if err != nil {
		return nil, err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	lines, err := ParseCrtList(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return lines, nil
}

// ShowCert returns the SHA-1 fingerprint and the subject of a loaded certificate, to detect drift.
// ErrNotFound when the path is not loaded.
func ShowCert(ctx context.Context, r Runner, certPath string) (fingerprint, subject string, err error) {
	cmd, err := line("show", "ssl", "cert", certPath)
	if err != nil {
		return "", "", err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return "", "", err
	}
	info, err := ParseCert(reply)
	if err != nil {
		return "", "", parseError(cmd, reply, err)
	}
	return info.Fingerprint, info.Subject, nil
}

// NewCAFile creates an empty CA file (ErrExists when the path is loaded already).
// NewCAFile, SetCAFile, CommitCAFile and DelCAFile manage an ssl ca-file by path.
func NewCAFile(ctx context.Context, r Runner, caPath string) error {
	cmd, err := line("new", "ssl", "ca-file", caPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtCACreated, caPath))
}

// SetCAFile starts or updates the transaction of caPath (blank lines dropped as in SetCert).
func SetCAFile(ctx context.Context, r Runner, caPath, pem string) error {
	return caFilePayload(ctx, r, "set", caPath, pem)
}

// AddCAFile adds the certificates of pem to the open transaction of caPath (or to a copy of the live
// CA file when none is open): `add ssl ca-file <path> <<`, HAProxy 2.7+. With SetCAFile for the first
// part, it carries a CA bundle larger than one payload may be (tune.bufsize on 2.6–3.3).
func AddCAFile(ctx context.Context, r Runner, caPath, pem string) error {
	return caFilePayload(ctx, r, "add", caPath, pem)
}

// caFilePayload sends `<verb> ssl ca-file <caPath> <<` with pem (blank lines dropped) and expects the
// transaction HAProxy opens or updates.
func caFilePayload(ctx context.Context, r Runner, verb, caPath, pem string) error {
	return sslFilePayload(ctx, r, verb, "ca-file", caPath, pem, fmtCATxCreated, fmtCATxUpdated)
}

// sslFilePayload sends `<verb> ssl <kind> <path> <<` with pem (blank lines dropped) and expects one
// of the replies created and updated format with path.
func sslFilePayload(ctx context.Context, r Runner, verb, kind, path, pem, created, updated string) error {
	cmd, err := line(verb, "ssl", kind, path)
	if err != nil {
		return err
	}
	payload, err := pemPayload(pem)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return expectPayload(ctx, r, cmd, payload, fmt.Sprintf(created, path), fmt.Sprintf(updated, path))
}

// SplitPEM cuts pem (blank lines dropped, as SetCert and SetCAFile send it) into parts of at most
// limit bytes each, cutting only after the end line of a PEM block, so that each part holds whole
// certificates. ErrInvalid when one block alone is longer than limit or pem holds no line.
func SplitPEM(pem string, limit int) ([]string, error) {
	payload, err := pemPayload(pem)
	if err != nil {
		return nil, err
	}
	var parts []string
	var part, block strings.Builder
	flush := func() error {
		if block.Len() > limit {
			return fmt.Errorf("%w: one PEM block is %d bytes, over the payload limit of %d", ErrInvalid, block.Len(), limit)
		}
		if part.Len()+block.Len() > limit {
			parts = append(parts, part.String())
			part.Reset()
		}
		part.WriteString(block.String())
		block.Reset()
		return nil
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(payload, "\n"), "\n") {
		block.WriteString(l)
		block.WriteByte('\n')
		if strings.HasPrefix(l, "-----END ") {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if block.Len() > 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if part.Len() > 0 {
		parts = append(parts, part.String())
	}
	return parts, nil
}

// CommitCAFile commits the transaction of caPath.
func CommitCAFile(ctx context.Context, r Runner, caPath string) error {
	return commitTransaction(ctx, r, "ca-file", caPath)
}

// AbortCAFile aborts the transaction of caPath (ErrNotFound without one).
func AbortCAFile(ctx context.Context, r Runner, caPath string) error {
	return abortTransaction(ctx, r, "ca-file", caPath)
}

// DelCAFile deletes an unused CA file. Checked on 2.6.12: HAProxy does not count servers added at
// runtime as users, so it deletes a CA file such a server names; only delete what no server uses.
func DelCAFile(ctx context.Context, r Runner, caPath string) error {
	cmd, err := line("del", "ssl", "ca-file", caPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, fmt.Sprintf(fmtCADeleted, caPath))
}

// SetCRLFile starts or updates the transaction of the CRL file crlPath with pem (blank lines dropped
// as in SetCert): `set ssl crl-file <path> <<`. HAProxy replaces a CRL file its configuration names
// only; CommitCRLFile applies it to the binds that use it.
func SetCRLFile(ctx context.Context, r Runner, crlPath, pem string) error {
	return sslFilePayload(ctx, r, "set", "crl-file", crlPath, pem, fmtCRLTxCreated, fmtCRLTxUpdated)
}

// CommitCRLFile commits the transaction of crlPath.
func CommitCRLFile(ctx context.Context, r Runner, crlPath string) error {
	return commitTransaction(ctx, r, "crl-file", crlPath)
}

// AbortCRLFile aborts the transaction of crlPath (ErrNotFound without one).
func AbortCRLFile(ctx context.Context, r Runner, crlPath string) error {
	return abortTransaction(ctx, r, "crl-file", crlPath)
}

// ShowInfo returns `show info` as name → value.
func ShowInfo(ctx context.Context, r Runner) (map[string]string, error) {
	const cmd = "show info"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	info, err := ParseInfo(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return info, nil
}

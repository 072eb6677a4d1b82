// Package clientca keeps the two files HAProxy uses to check client certificates for mutual TLS, a
// CA bundle and the certificate revocation lists (CRLs) of those CAs, in step with the bundle that
// OpenShift's router takes from ROUTER_MUTUAL_TLS_AUTH_CA (a ConfigMap mounted in the pod).
//
// # Files
//
// Dir/ca-bundle.pem holds every certificate of the bundle, each once, re-encoded as PEM in the
// bundle's order. Comments, other PEM blocks and blank lines are dropped: a blank line ends a payload
// on HAProxy's runtime API, so the file can be sent as is with "set ssl ca-file". Dir/crls.pem holds
// one "X509 CRL" PEM block per distinct CRL, in the bundle's order. Both are written with mode 0600
// through a temporary file renamed over the old one, and only when their content changes; Dir is
// created with mode 0700.
//
// # Which CRLs
//
// Every certificate of the bundle that has CRL distribution points, a CA or not, asks for one CRL:
// the first of its http:// distribution points that yields a valid one. Leaf certificates count too,
// as with the stock router, whose tests put a leaf in the bundle for the sole purpose of naming the
// CRL of its issuer. Other schemes (ldap, https) are not fetched, as with the stock router. HaveCRLs
// is true as soon as one certificate has a distribution point; it depends on the bundle only, never
// on the network, so the decision to render crl-file does not change with a download.
//
// A distribution point names the CRL that would revoke the certificate carrying it, a CRL signed by
// that certificate's issuer. A bundle whose CAs each carry the URL of the CRL they sign yields one
// CRL per CA. A bundle laid out the other way, an intermediate carrying its root's CRL URL, yields
// the root's CRL but not the intermediate's.
//
// # What HAProxy requires
//
// A bind with crl-file gets the OpenSSL flags X509_V_FLAG_CRL_CHECK and X509_V_FLAG_CRL_CHECK_ALL:
// each certificate of a client's chain must then be covered by a valid CRL from its issuer, or the
// handshake fails (verify error 3, unable to get certificate CRL, or 12, CRL has expired). HAProxy's
// manual says as much for crl-file: a CRL is needed for every certificate of the CA chain. Once
// crls.pem is in use, every CA a client chains through must have signed one of the CRLs in it, the
// root included. The clients of a CA with no CRL in the file are rejected, and nothing written in
// crls.pem can change that: OpenSSL accepts a CRL only when that CA's key signed it. The stock router
// has the same limit, writing only the CRLs it downloaded. Files.Uncovered names these CAs.
//
// An empty crl-file is refused by HAProxy (OpenSSL finds no object in it, a fatal error at start,
// and "set ssl crl-file" answers "Invalid payload"). So when CRLs are wanted but none is held yet,
// crls.pem gets a placeholder: a CRL issued under a name no CA has, by a key thrown away at once,
// expired since 2000. It makes the file loadable and covers no chain.
//
// # Download failures
//
// A certificate that has no usable CRL (none downloaded yet, or the one held has expired and no
// fresh one came) makes Sync return an error wrapping ErrCRLUnavailable with a *CRLError per
// certificate, naming its subject and the URLs tried. Sync writes the files all the same: the bundle
// as read, and the CRLs it holds (or the placeholder). HAProxy then rejects the clients that need a
// missing CRL and accepts the others: it fails closed, CA by CA. The stock router does not refuse to
// start either: it writes a placeholder CRL before its first download so that HAProxy starts and
// serves everything but the affected mTLS clients, and retries every 5 minutes. A caller matching
// that behaviour logs an ErrCRLUnavailable error at start and goes on; Run retries. A caller that
// must not start without every CRL treats it as fatal.
//
// A failed refresh while the CRL held is still valid is no error: the CRL stays, a warning is logged
// and the download is retried with a backoff from 10 seconds, doubling up to 5 minutes, and never
// later than the CRL's nextUpdate. Unlike the stock router, which drops a whole update when one CRL
// fails, a new bundle is applied at once (a CA removed from it leaves HAProxy without delay) together
// with every CRL that could be had.
//
// A CRL downloaded past its nextUpdate is refused and the next distribution point is tried. A CRL
// held past its nextUpdate stays in crls.pem (HAProxy rejects its clients with "CRL has expired")
// until a fresh one comes, and Sync reports it. A CRL without nextUpdate never expires in OpenSSL; it
// is kept and downloaded again every MaxAge. A download no newer than the CRL held (by thisUpdate and
// CRL number) does not replace it. A CRL whose issuer name is a certificate of the bundle must carry a
// signature that certificate's key verifies, or it is refused; one whose issuer is not in the bundle
// is kept with a warning, since HAProxy may check it against an intermediate the client sends.
//
// # Timing
//
// Run reads the bundle every PollInterval (2 seconds) and compares a SHA-256 of its content, not its
// modification time: a ConfigMap update swaps a symlink and leaves the file's own metadata
// meaningless. A CRL is downloaded again a margin before its nextUpdate, a tenth of its validity
// (thisUpdate to nextUpdate) kept between 1 minute and 1 hour, and at the latest MaxAge (1 hour)
// after the last download, so that revocations published ahead of schedule reach HAProxy. The stock
// router downloads a CRL only once its nextUpdate has passed, so HAProxy holds an expired CRL until
// the new one arrives, 5 more minutes at each failure.
//
// # HAProxy side
//
// Render "ca-file Dir/ca-bundle.pem" on the binds that verify clients, and "crl-file Dir/crls.pem"
// only while HaveCRLs is true. A bind started without crl-file cannot get one at runtime ("set ssl
// crl-file" replaces only a CRL file the configuration references), so a change of HaveCRLs needs a
// reload; other changes can go through "set ssl ca-file" / "commit ssl ca-file" and "set ssl
// crl-file" / "commit ssl crl-file" (HAProxy 2.5 and later). Before HAProxy 3.4 a command and its
// payload must fit in tune.bufsize (16 kB by default), and there is no "add ssl crl-file" to send a
// CRL file in parts: a larger crls.pem needs a reload.
package clientca

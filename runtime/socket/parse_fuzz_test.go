package socket

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Fuzz targets of the reply parsers, one per parser, seeded with every recorded reply of every HAProxy
// series (recorded_fuzz_test.go). Each checks on every input that the parser returns within
// parseTimeout, that what it returns is bounded by the reply (at most one item per line, at most as
// many bytes of text as the reply has), and the properties its callers rely on; before fuzzing, that
// every recorded reply of its kind parses.

// parseTimeout bounds one parse: the parsers are linear, and a reply of the fuzzer's size takes
// microseconds.
const parseTimeout = 5 * time.Second

// parsed is what a parser returned, reduced to its size: its items (rows, entries, lines, processes)
// and every string among them. The strings hold at most as many bytes as the reply, or maxText when
// the parser may make text longer.
type parsed struct {
	items   int
	text    []string
	maxText int
}

// parser parses a reply into its size; it reports a broken property of a successful parse with
// tb.Errorf (it runs on a goroutine of its own).
type parser func(tb testing.TB, reply string) (parsed, error)

// fuzzParser runs the common part of a parser fuzz target: the recorded replies of kind are seeds and
// must parse; the other recorded replies are seeds too (a parser may be handed any reply).
func fuzzParser(f *testing.F, kind string, parse parser) {
	own, other := repliesOf(f, recordedReplies(f), kind)
	for _, r := range own {
		if _, err := parse(f, r.reply); err != nil {
			f.Fatalf("%s: the recorded reply does not parse: %v", r.source, err)
		}
		f.Add(r.reply)
	}
	for _, r := range other {
		f.Add(r.reply)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		res, err := parseWithin(t, reply, parse)
		if err != nil {
			return
		}
		lines := strings.Count(reply, "\n") + 1
		if res.items > lines {
			t.Fatalf("%d items from a reply of %d lines", res.items, lines)
		}
		n := 0
		for _, s := range res.text {
			n += len(s)
		}
		if limit := max(res.maxText, len(reply)); n > limit {
			t.Fatalf("%d bytes of text from a reply of %d bytes (at most %d)", n, len(reply), limit)
		}
	})
}

// parseWithin parses reply on a goroutine and fails the test when that takes over parseTimeout.
func parseWithin(t *testing.T, reply string, parse parser) (parsed, error) {
	t.Helper()
	type result struct {
		res parsed
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := parse(t, reply)
		done <- result{res, err}
	}()
	timer := time.NewTimer(parseTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.res, r.err
	case <-timer.C:
		t.Fatalf("the parse of a reply of %d bytes did not end within %v", len(reply), parseTimeout)
		return parsed{}, nil
	}
}

func FuzzParseShowProc(f *testing.F) {
	fuzzParser(f, kindShowProc, func(tb testing.TB, reply string) (parsed, error) {
		ps, err := ParseShowProc(reply)
		if err != nil {
			return parsed{}, err
		}
		if ps.Master.Type != "master" {
			tb.Errorf("master of type %q", ps.Master.Type)
		}
		for _, w := range ps.Workers {
			if w.Type != "worker" {
				tb.Errorf("worker of type %q", w.Type)
			}
		}
		// The views callers take of the list stay within it.
		if w, ok := ps.Current(); ok && (w.Old || !slices.Contains(ps.Workers, w)) {
			tb.Errorf("Current %+v is not a current worker of the list", w)
		}
		if w, ok := ps.Serving(); ok && !slices.Contains(ps.Workers, w) {
			tb.Errorf("Serving %+v is not in the list", w)
		}
		for _, w := range ps.Draining() {
			if !w.Old || !slices.Contains(ps.Workers, w) {
				tb.Errorf("Draining %+v is not an old worker of the list", w)
			}
		}
		text := []string{ps.Master.Type, ps.Version.Text}
		for _, w := range ps.Workers {
			text = append(text, w.Type)
		}
		return parsed{items: 1 + len(ps.Workers), text: text}, nil
	})
}

func FuzzParseServersState(f *testing.F) {
	fuzzParser(f, kindServersState, func(tb testing.TB, reply string) (parsed, error) {
		rows, err := ParseServersState(reply)
		if err != nil {
			return parsed{}, err
		}
		var text []string
		for _, r := range rows {
			for _, s := range []string{r.Backend, r.Server, r.Addr} {
				if s == "" || strings.ContainsAny(s, " \t\n") {
					tb.Errorf("row %+v: field %q is empty or holds whitespace", r, s)
				}
			}
			text = append(text, r.Backend, r.Server, r.Addr)
		}
		return parsed{items: len(rows), text: text}, nil
	})
}

func FuzzParseMap(f *testing.F) {
	fuzzParser(f, kindShowMap, func(tb testing.TB, reply string) (parsed, error) {
		entries, err := ParseMap(reply)
		if err != nil {
			return parsed{}, err
		}
		var text []string
		for _, e := range entries {
			if e.Key == "" || strings.ContainsAny(e.Key, " \n") || strings.Contains(e.Value, "\n") {
				tb.Errorf("entry %q %q: empty key, or a separator in it", e.Key, e.Value)
			}
			text = append(text, e.Key, e.Value)
		}
		return parsed{items: len(entries), text: text}, nil
	})
}

func FuzzParseCertPaths(f *testing.F) {
	fuzzParser(f, kindCertPaths, func(tb testing.TB, reply string) (parsed, error) {
		paths, err := ParseCertPaths(reply)
		if err != nil {
			return parsed{}, err
		}
		for _, p := range paths {
			if p == "" || strings.HasPrefix(p, "# ") || strings.Contains(p, "\n") {
				tb.Errorf("path %q: empty, a section header or several lines", p)
			}
		}
		return parsed{items: len(paths), text: paths}, nil
	})
}

func FuzzParseCertDetails(f *testing.F) {
	fuzzParser(f, kindCert, func(tb testing.TB, reply string) (parsed, error) {
		d, err := ParseCertDetails(reply)
		if err != nil {
			if _, err2 := ParseCert(reply); err2 == nil {
				tb.Errorf("ParseCert accepts what ParseCertDetails refuses: %v", err)
			}
			return parsed{}, err
		}
		if info, err := ParseCert(reply); err != nil || info != d.CertInfo {
			tb.Errorf("ParseCert = %+v, %v; ParseCertDetails has %+v", info, err, d.CertInfo)
		}
		if d.Filename == "" || d.Fingerprint == "" {
			tb.Errorf("no Filename or Fingerprint in %+v", d.CertInfo)
		}
		c := d.CertInfo
		text := []string{c.Filename, c.Status, c.Serial, c.NotBefore, c.NotAfter, c.SAN, c.Fingerprint, c.Subject, c.Issuer, d.Algorithm}
		text = append(append(text, d.ChainSubjects...), d.ChainIssuers...)
		return parsed{items: 1 + len(d.ChainSubjects) + len(d.ChainIssuers), text: text}, nil
	})
}

func FuzzParseCrtList(f *testing.F) {
	fuzzParser(f, kindCrtList, func(tb testing.TB, reply string) (parsed, error) {
		lines, err := ParseCrtList(reply)
		if err != nil {
			return parsed{}, err
		}
		for _, l := range lines {
			if l == "" || strings.HasPrefix(l, "#") || strings.ContainsAny(l, "\n\x00") {
				tb.Errorf("line %q: empty, a comment, several lines or a NUL", l)
			}
		}
		return parsed{items: len(lines), text: lines}, nil
	})
}

func FuzzParseInfo(f *testing.F) {
	fuzzParser(f, kindInfo, func(tb testing.TB, reply string) (parsed, error) {
		info, err := ParseInfo(reply)
		if err != nil {
			return parsed{}, err
		}
		if info["Name"] == "" || info["Pid"] == "" {
			tb.Errorf("no Name or Pid in %q", info)
		}
		var text []string
		for k, v := range info {
			text = append(text, k, v)
		}
		return parsed{items: len(info), text: text}, nil
	})
}

func FuzzParseMapLookup(f *testing.F) {
	fuzzParser(f, kindGetMap, func(tb testing.TB, reply string) (parsed, error) {
		lookups, err := ParseMapLookup(reply)
		if err != nil {
			return parsed{}, err
		}
		if len(lookups) == 0 {
			tb.Errorf("no lookup and no error")
		}
		var text []string
		for _, l := range lookups {
			text = append(text, l.Type, l.Key, l.Value)
		}
		// Unquoting turns a byte that is not UTF-8 into U+FFFD, three bytes.
		return parsed{items: len(lookups), text: text, maxText: 3 * len(reply)}, nil
	})
}

// FuzzParseReload is seeded with the answers of every version: 2.6's empty one and 2.7+'s
// "Success=1|0", the start-up log after "--".
func FuzzParseReload(f *testing.F) {
	for _, r := range []string{
		"",
		"Success=1\n--\n[NOTICE] loaded\n",
		"Success=0\n--\n[ALERT] parse error\n",
		"Success=0\n--\n" + replyReloadInProgress + "\n",
	} {
		if _, err := ParseReload(r); err != nil {
			f.Fatalf("ParseReload(%q): %v", r, err)
		}
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		rr, err := parseWithin(t, reply, func(tb testing.TB, reply string) (parsed, error) {
			rr, err := ParseReload(reply)
			if err != nil {
				return parsed{}, err
			}
			if rr.InProgress && rr.Success || !rr.Sync && (rr.Success || rr.Log != "") {
				tb.Errorf("inconsistent answer %+v", rr)
			}
			return parsed{items: 1, text: []string{rr.Log}}, nil
		})
		if err == nil && len(rr.text[0]) > len(reply) {
			t.Fatalf("a log of %d bytes from a reply of %d", len(rr.text[0]), len(reply))
		}
	})
}

package source

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/haroute/haroute/mapping"
)

// settleTime is how long a file rewritten in place must keep the same bytes before content that drops
// objects of its content in force is taken. A writer that truncates a file and then writes it again
// (an editor saving in place, `kubectl get -o yaml > file`, a configuration tool) shows an empty file,
// or one cut at a document boundary, for a moment; both decode cleanly. Taken at once, they withdraw
// Routes that are back a moment later, and every request to them fails meanwhile. Such writes take
// milliseconds, and seldom a second when a slow tool generates the file as it writes it; two seconds
// covers them and still withdraws a deliberate removal soon. Content that only adds or changes objects
// needs no wait, and neither does a file replaced by a rename, which is complete by construction.
const settleTime = 2 * time.Second

// content is one decoded version of a manifest file.
type content struct {
	in   mapping.Input
	ids  []string // the object names of in, in order
	data []byte
	sum  [sha256.Size]byte
}

// heldContent is content that decoded cleanly but drops objects of the content in force, waiting for
// the file to stop changing.
type heldContent struct {
	content
	since time.Time // when a scan first saw these bytes
	lost  []string  // the objects of the content in force that it drops
}

// heldError is the FileError of a held file: its content in force stays until the settle time ends.
type heldError struct {
	path   string
	lost   []string
	settle time.Duration
}

func (e *heldError) Error() string {
	what := "objects"
	if len(e.lost) == 1 {
		what = "object"
	}
	return fmt.Sprintf("%s: the new content drops %d %s of the content in force (%s); held for %v until the file stops changing",
		e.path, len(e.lost), what, summarize(e.lost, 3), e.settle)
}

// summarize lists the first n of ids and says how many more there are.
func summarize(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}

// scanClock reads the Folder's clock at most once per scan, and only when a scan needs the time: held
// content is rare, and a clock a test controls should not be read for nothing.
type scanClock struct {
	read func() time.Time
	at   time.Time
}

func (c *scanClock) now() time.Time {
	if c.at.IsZero() {
		c.at = c.read()
	}
	return c.at
}

// readManifest reads the file at path and returns its bytes with the description of the file they were
// read from (the same open file, so that a rename between the two cannot mix two files up).
func readManifest(path string) ([]byte, fs.FileInfo, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, nil, err
	}
	return data, info, nil
}

// offer takes the cleanly decoded content c of the file at path as its content in force, unless it
// drops objects of the content in force and the file may still be in the middle of a rewrite: then c
// is held (see settleTime). replaced says that the file is another one than at the last read (a rename
// put it there), so that c is complete.
func (f *Folder) offer(path string, st *fileState, c content, replaced bool, clock *scanClock) {
	if st.good != nil && !replaced {
		if lost := dropped(st.ids, c.ids); len(lost) > 0 {
			st.held = &heldContent{content: c, since: clock.now(), lost: lost}
			st.err = &heldError{path: path, lost: lost, settle: f.settle}
			return
		}
	}
	if st.held != nil {
		f.log.Info("manifest file complete again before its settle time ended: nothing was withdrawn", "path", path)
	}
	st.accept(c)
}

// settleHeld takes a file's held content once its bytes have not changed for the settle time.
func (f *Folder) settleHeld(path string, st *fileState, clock *scanClock) {
	if st.held == nil || clock.now().Sub(st.held.since) < f.settle {
		return
	}
	h := st.held
	f.log.Info("manifest file stopped changing: its new content is in force", "path", path,
		"withdrawn", len(h.lost), "objects", summarize(h.lost, 3))
	st.accept(h.content)
}

// nextSettle returns how long until the earliest held file's settle time ends, or 0 when no file is
// held.
func (f *Folder) nextSettle(clock *scanClock) time.Duration {
	var next time.Duration
	for _, st := range f.files {
		if st.held == nil {
			continue
		}
		// At least a millisecond: a held file is always re-read after its time, never in a busy loop.
		wait := max(st.held.since.Add(f.settle).Sub(clock.now()), time.Millisecond)
		if next == 0 || wait < next {
			next = wait
		}
	}
	return next
}

// accept makes c the content in force of the file.
func (st *fileState) accept(c content) {
	st.good, st.goodSum, st.goodData, st.ids = &c.in, c.sum, c.data, c.ids
	st.err, st.held, st.fromCache = nil, nil, false
}

// dropped returns the names in old that are not in now, in old's order.
func dropped(old, now []string) []string {
	keep := make(map[string]bool, len(now))
	for _, id := range now {
		keep[id] = true
	}
	var lost []string
	for _, id := range old {
		if !keep[id] {
			lost = append(lost, id)
		}
	}
	return lost
}

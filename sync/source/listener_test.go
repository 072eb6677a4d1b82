package source

import (
	"context"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping/model"
)

// fakeListener is a ListenerFiles whose files the test sets.
type fakeListener struct {
	current model.ListenerFiles
	changes chan struct{}
}

func (f *fakeListener) Files() model.ListenerFiles { return f.current }
func (f *fakeListener) Changes() <-chan struct{}   { return f.changes }
func (f *fakeListener) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// TestWithListener: every snapshot carries the current listener files, a change of them is a change
// of the source, and Run ends when its context does.
func TestWithListener(t *testing.T) {
	folder := NewFolder(t.TempDir(), nil)
	l := &fakeListener{current: model.ListenerFiles{DefaultCertificate: "one"}, changes: make(chan struct{}, 1)}
	src := WithListener(folder, l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !src.HasSynced() {
		if time.Now().After(deadline) {
			t.Fatal("not synced within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if in, _ := src.Snapshot(); in.Listener.DefaultCertificate != "one" {
		t.Fatalf("snapshot listener files %+v", in.Listener)
	}
	// Drain what the folder signalled at start, then change the files.
	for len(src.Changes()) > 0 {
		<-src.Changes()
	}
	l.current = model.ListenerFiles{DefaultCertificate: "two"}
	l.changes <- struct{}{}
	select {
	case <-src.Changes():
	case <-time.After(5 * time.Second):
		t.Fatal("a listener change was not forwarded")
	}
	if in, _ := src.Snapshot(); in.Listener.DefaultCertificate != "two" {
		t.Fatalf("snapshot listener files %+v", in.Listener)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}

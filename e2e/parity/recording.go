package parity

import (
	"encoding/json"
	"fmt"
	"os"
)

// Recording is the stock router's answers to the corpus, as `make parity` recorded them
// (testdata/stock-answers.json): the replay compares haroute's answers with them.
type Recording struct {
	// StockCommit is the github.com/openshift/router commit the stock router was built from (the
	// build's COMMIT file).
	StockCommit string `json:"stockCommit"`
	// HAProxy is the version line of the HAProxy the stock router ran.
	HAProxy string `json:"haproxy"`
	// Corpus is the corpus's digest when recorded (Corpus.Digest): a replay of another corpus is
	// refused, the recording being stale.
	Corpus string `json:"corpus"`
	// Answers are the stock router's answers, in corpus order.
	Answers []Answer `json:"answers"`
}

// Write writes the recording as indented JSON.
func (r Recording) Write(file string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	return nil
}

// ReadRecording reads a recording and checks that it answers exactly the requests of c, in order.
func ReadRecording(file string, c *Corpus) (Recording, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Recording{}, fmt.Errorf("recording: %w", err)
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return Recording{}, fmt.Errorf("recording %s: %w", file, err)
	}
	if digest := c.Digest(); r.Corpus != digest {
		return Recording{}, fmt.Errorf("recording %s is of another corpus (digest %s, the corpus is %s): "+
			"record the stock router's answers again with `make parity` (as root)", file, r.Corpus, digest)
	}
	reqs := c.Requests()
	if len(r.Answers) != len(reqs) {
		return Recording{}, fmt.Errorf("recording %s has %d answers for %d requests", file, len(r.Answers), len(reqs))
	}
	for i, q := range reqs {
		if r.Answers[i].ID != q.ID {
			return Recording{}, fmt.Errorf("recording %s: answer %d is for %s, the request is %s", file, i, r.Answers[i].ID, q.ID)
		}
	}
	return r, nil
}

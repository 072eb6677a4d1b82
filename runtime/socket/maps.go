package socket

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// AddMap adds an entry to the map file at mapPath (as the config names it), even when the key is
// present (HAProxy keeps both; the first one wins). AddMap, SetMap and DelMap edit one entry each.
func AddMap(ctx context.Context, r Runner, mapPath, key, value string) error {
	cmd, err := line("add", "map", mapPath, key, value)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// SetMap changes the value of an existing key (ErrNotFound when absent).
func SetMap(ctx context.Context, r Runner, mapPath, key, value string) error {
	cmd, err := line("set", "map", mapPath, key, value)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// DelMap deletes a key (ErrNotFound when absent).
func DelMap(ctx context.Context, r Runner, mapPath, key string) error {
	cmd, err := line("del", "map", mapPath, key)
	if err != nil {
		return err
	}
	return expect(ctx, r, cmd, "")
}

// ReplaceMap replaces the map's content atomically: prepare map, add map @ver with payloads of at most
// maxPayload bytes, commit map; on any error it leaves the live version untouched.
//
// maxPayload bounds the payload lines of one `add map @<ver> <map> <<` (the command line comes on top,
// and HAProxy 2.6 drops the connection without an answer when command and payload exceed
// tune.bufsize): pass tune.bufsize minus a margin for the command line. HAProxy 2.6 has no way to
// abort a prepared version: an uncommitted one is simply dropped by the next `prepare map` (and never
// seen by lookups), so a failure part-way needs no clean-up. An empty entries list commits an empty
// version, which empties the map.
func ReplaceMap(ctx context.Context, r Runner, mapPath string, entries []MapEntry, maxPayload int) error {
	chunks, err := mapPayloads(entries, maxPayload)
	if err != nil {
		return fmt.Errorf("replace map %s: %w", mapPath, err)
	}
	prepare, err := line("prepare", "map", mapPath)
	if err != nil {
		return err
	}
	reply, err := r.Command(ctx, prepare)
	if err != nil {
		return err
	}
	ver, err := parseMapVersion(reply)
	if err != nil {
		return parseError(prepare, reply, err)
	}
	at := "@" + strconv.Itoa(ver)
	add, err := line("add", "map", at, mapPath)
	if err != nil {
		return err
	}
	for _, chunk := range chunks {
		if err := expectPayload(ctx, r, add, chunk, ""); err != nil {
			return err
		}
	}
	commit, err := line("commit", "map", at, mapPath)
	if err != nil {
		return err
	}
	return expect(ctx, r, commit, "")
}

// parseMapVersion reads "New version created: <n>".
func parseMapVersion(reply string) (int, error) {
	s, ok := strings.CutPrefix(trimReply(reply), replyMapVersion)
	if !ok {
		return 0, fmt.Errorf("no %q", replyMapVersion)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("version %q is not a number", s)
	}
	return v, nil
}

// mapPayloads packs entries into "key value" payloads of at most maxPayload bytes each.
func mapPayloads(entries []MapEntry, maxPayload int) ([]string, error) {
	var chunks []string
	var b strings.Builder
	for i, e := range entries {
		if err := checkMapEntry(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		n := len(e.Key) + 1 + len(e.Value) + 1
		if n > maxPayload {
			return nil, fmt.Errorf("entry %d (%q): %w: %d bytes, over the payload limit of %d", i, e.Key, ErrInvalid, n, maxPayload)
		}
		if b.Len()+n > maxPayload {
			chunks = append(chunks, b.String())
			b.Reset()
		}
		b.WriteString(e.Key)
		b.WriteByte(' ')
		b.WriteString(e.Value)
		b.WriteByte('\n')
	}
	if b.Len() > 0 {
		chunks = append(chunks, b.String())
	}
	return chunks, nil
}

// checkMapEntry refuses an entry that would not read back as the same key and value from a payload
// line (HAProxy takes the first word as the key and the rest of the line as the value).
func checkMapEntry(e MapEntry) error {
	if err := checkWord(e.Key); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if err := checkWord(e.Value); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	return nil
}

// ShowMap returns the live entries of a map in HAProxy's order. ErrNotFound for an unknown map.
func ShowMap(ctx context.Context, r Runner, mapPath string) ([]MapEntry, error) {
	cmd, err := line("show", "map", mapPath)
	if err != nil {
		return nil, err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	entries, err := ParseMap(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return entries, nil
}

package views

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/reload"
)

// ReadFiles reads what haroute run wrote under dir for cfg's maps: the server lines of the
// configuration (haproxy.cfg and the backend files) by backend, and the map files. A map file that
// is missing reads as empty.
func ReadFiles(dir string, cfg *model.Config) (*Files, error) {
	raw, err := reload.ReadConfiguration(dir)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	files := &Files{Servers: ParseConfigServers(raw), Maps: map[string][]model.MapEntry{}}
	paths, err := render.PathsFor(cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	for _, m := range cfg.Maps {
		b, err := os.ReadFile(paths.Maps[m.Name])
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("files: %w", err)
		}
		files.Maps[m.Name] = ParseMapFile(b)
	}
	return files, nil
}

// ParseConfigServers returns the server lines of a haproxy.cfg by backend: name, address, weight
// (1 when absent, HAProxy's default) and whether the line disables the server. A server written in
// both arms of a conditional block (`.if version_atleast(3.0)` … `.else` … `.endif`, which give it
// its cookie value on 3.0 and later) counts once: the arms differ in the cookie only.
func ParseConfigServers(cfg []byte) map[string][]FileServer {
	out := map[string][]FileServer{}
	seen := map[string]bool{} // backend + "/" + server
	backend := ""
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if strings.HasPrefix(fields[0], ".") { // a conditional block's line, within the section
			continue
		}
		if line[0] != ' ' && line[0] != '\t' { // a section starts
			backend = ""
			if fields[0] == "backend" && len(fields) > 1 {
				backend = fields[1]
			}
			continue
		}
		if backend == "" || fields[0] != "server" || len(fields) < 3 {
			continue
		}
		if seen[backend+"/"+fields[1]] {
			continue
		}
		seen[backend+"/"+fields[1]] = true
		sv := FileServer{Name: fields[1], Addr: fields[2], Weight: 1}
		for i := 3; i < len(fields); i++ {
			switch fields[i] {
			case "weight":
				if i+1 < len(fields) {
					if w, err := strconv.Atoi(fields[i+1]); err == nil {
						sv.Weight = w
					}
				}
			case "disabled":
				sv.Disabled = true
			}
		}
		out[backend] = append(out[backend], sv)
	}
	return out
}

// ParseMapFile returns the entries of a map file (blank lines and comments skipped).
func ParseMapFile(b []byte) []model.MapEntry {
	var out []model.MapEntry
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		out = append(out, model.MapEntry{Key: k, Value: strings.TrimSpace(v)})
	}
	return out
}

package testkit

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
)

// Stat returns one numeric field (e.g. "stot", "hrsp_5xx") of `show stat` for proxy pxname and
// server svname ("FRONTEND" and "BACKEND" name a proxy's own rows). An empty field reads as 0.
func (h *HAProxy) Stat(pxname, svname, field string) (int64, error) {
	out, err := h.Cmd("show stat")
	if err != nil {
		return 0, err
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return 0, fmt.Errorf("show stat: parse: %w", err)
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("show stat: empty reply")
	}
	col := -1
	for i, name := range rows[0] {
		if name == field {
			col = i
		}
	}
	if col < 0 {
		return 0, fmt.Errorf("show stat: no field %q", field)
	}
	for _, row := range rows[1:] {
		if len(row) > col && len(row) > 1 && row[0] == pxname && row[1] == svname {
			if row[col] == "" {
				return 0, nil
			}
			n, err := strconv.ParseInt(row[col], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("show stat: %s/%s %s=%q: %w", pxname, svname, field, row[col], err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("show stat: no row %s/%s", pxname, svname)
}

package render

import (
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// quoteLogFormat returns f as one single-quoted haproxy.cfg word, the argument of a log-format line.
// Between single quotes HAProxy interprets nothing (no escapes, no environment variables, no
// comments) until the next single quote, and model.CheckLogFormat guarantees f holds none, nor a line
// break: the format reaches HAProxy exactly as written and cannot end the line early.
func quoteLogFormat(f string) (string, error) {
	if err := model.CheckLogFormat(f); err != nil {
		return "", fmt.Errorf("quoteLogFormat: %w", err)
	}
	return "'" + f + "'", nil
}

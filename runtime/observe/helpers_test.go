package observe

import (
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
)

// selfSigned returns a PEM certificate (and key) for name, issued by a CA of its own.
func selfSigned(t *testing.T, name string) (certPEM, keyPEM string) {
	t.Helper()
	c, k := testkit.NewCA(t, name+" CA").Issue(t, name)
	return string(c), string(k)
}

func server(name string, id int32, addr string, port, weight int32, state model.ServerState) model.Server {
	return model.Server{Name: name, ID: id, Addr: addr, Port: port, Weight: weight, State: state, Service: "ns/svc"}
}

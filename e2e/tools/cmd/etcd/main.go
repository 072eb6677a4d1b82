// Command etcd is the upstream etcd server, built from the go.etcd.io/etcd/server/v3
// module pinned in e2e/tools/go.mod for haroute's e2e tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

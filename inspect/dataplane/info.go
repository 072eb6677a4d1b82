package dataplane

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/haproxytech/client-native/v6/models"

	"github.com/haroute/haroute/runtime/socket"
)

// infoFields maps the numeric lines of `show info` to the fields of the Data Plane API's process
// information. Names are HAProxy's (the same on 2.6, 3.0, 3.2 and 3.4); 2.6 to 3.4 print
// "Unstoppable Jobs" with a space, which the underscore spelling covers should a version change it.
// A line HAProxy does not print leaves its field unset.
var infoFields = map[string]func(*models.ProcessInfoItem) **int64{
	"ActivePeers":                 func(i *models.ProcessInfoItem) **int64 { return &i.ActivePeers },
	"BusyPolling":                 func(i *models.ProcessInfoItem) **int64 { return &i.BusyPolling },
	"BytesOutRate":                func(i *models.ProcessInfoItem) **int64 { return &i.BytesOutRate },
	"CompressBpsIn":               func(i *models.ProcessInfoItem) **int64 { return &i.CompressBpsIn },
	"CompressBpsOut":              func(i *models.ProcessInfoItem) **int64 { return &i.CompressBpsOut },
	"CompressBpsRateLim":          func(i *models.ProcessInfoItem) **int64 { return &i.CompressBpsRateLim },
	"ConnRate":                    func(i *models.ProcessInfoItem) **int64 { return &i.ConnRate },
	"ConnRateLimit":               func(i *models.ProcessInfoItem) **int64 { return &i.ConnRateLimit },
	"ConnectedPeers":              func(i *models.ProcessInfoItem) **int64 { return &i.ConnectedPeers },
	"CumConns":                    func(i *models.ProcessInfoItem) **int64 { return &i.CumConns },
	"CumReq":                      func(i *models.ProcessInfoItem) **int64 { return &i.CumReq },
	"CumSslConns":                 func(i *models.ProcessInfoItem) **int64 { return &i.CumSslConns },
	"CurrConns":                   func(i *models.ProcessInfoItem) **int64 { return &i.CurrConns },
	"CurrSslConns":                func(i *models.ProcessInfoItem) **int64 { return &i.CurrSslConns },
	"DroppedLogs":                 func(i *models.ProcessInfoItem) **int64 { return &i.DroppedLogs },
	"FailedResolutions":           func(i *models.ProcessInfoItem) **int64 { return &i.FailedResolutions },
	"Hard_maxconn":                func(i *models.ProcessInfoItem) **int64 { return &i.HardMaxConn },
	"Idle_pct":                    func(i *models.ProcessInfoItem) **int64 { return &i.IdlePct },
	"Jobs":                        func(i *models.ProcessInfoItem) **int64 { return &i.Jobs },
	"Listeners":                   func(i *models.ProcessInfoItem) **int64 { return &i.Listeners },
	"Maxconn":                     func(i *models.ProcessInfoItem) **int64 { return &i.MaxConn },
	"MaxConnRate":                 func(i *models.ProcessInfoItem) **int64 { return &i.MaxConnRate },
	"Maxpipes":                    func(i *models.ProcessInfoItem) **int64 { return &i.MaxPipes },
	"MaxSessRate":                 func(i *models.ProcessInfoItem) **int64 { return &i.MaxSessRate },
	"Maxsock":                     func(i *models.ProcessInfoItem) **int64 { return &i.MaxSock },
	"MaxSslConns":                 func(i *models.ProcessInfoItem) **int64 { return &i.MaxSslConns },
	"MaxSslRate":                  func(i *models.ProcessInfoItem) **int64 { return &i.MaxSslRate },
	"MaxZlibMemUsage":             func(i *models.ProcessInfoItem) **int64 { return &i.MaxZlibMemUsage },
	"Memmax_MB":                   func(i *models.ProcessInfoItem) **int64 { return &i.MemMaxMb },
	"Nbproc":                      func(i *models.ProcessInfoItem) **int64 { return &i.Processes },
	"Nbthread":                    func(i *models.ProcessInfoItem) **int64 { return &i.Nbthread },
	"Pid":                         func(i *models.ProcessInfoItem) **int64 { return &i.Pid },
	"PipesFree":                   func(i *models.ProcessInfoItem) **int64 { return &i.PipesFree },
	"PipesUsed":                   func(i *models.ProcessInfoItem) **int64 { return &i.PipesUsed },
	"PoolAlloc_MB":                func(i *models.ProcessInfoItem) **int64 { return &i.PoolAllocMb },
	"PoolFailed":                  func(i *models.ProcessInfoItem) **int64 { return &i.PoolFailed },
	"PoolUsed_MB":                 func(i *models.ProcessInfoItem) **int64 { return &i.PoolUsedMb },
	"Process_num":                 func(i *models.ProcessInfoItem) **int64 { return &i.ProcessNum },
	"Run_queue":                   func(i *models.ProcessInfoItem) **int64 { return &i.RunQueue },
	"SessRate":                    func(i *models.ProcessInfoItem) **int64 { return &i.SessRate },
	"SessRateLimit":               func(i *models.ProcessInfoItem) **int64 { return &i.SessRateLimit },
	"SslBackendKeyRate":           func(i *models.ProcessInfoItem) **int64 { return &i.SslBackendKeyRate },
	"SslBackendMaxKeyRate":        func(i *models.ProcessInfoItem) **int64 { return &i.SslBackendMaxKeyRate },
	"SslCacheLookups":             func(i *models.ProcessInfoItem) **int64 { return &i.SslCacheLookups },
	"SslCacheMisses":              func(i *models.ProcessInfoItem) **int64 { return &i.SslCacheMisses },
	"SslFrontendKeyRate":          func(i *models.ProcessInfoItem) **int64 { return &i.SslFrontendKeyRate },
	"SslFrontendMaxKeyRate":       func(i *models.ProcessInfoItem) **int64 { return &i.SslFrontendMaxKeyRate },
	"SslFrontendSessionReuse_pct": func(i *models.ProcessInfoItem) **int64 { return &i.SslFrontendSessionReuse },
	"SslRate":                     func(i *models.ProcessInfoItem) **int64 { return &i.SslRate },
	"SslRateLimit":                func(i *models.ProcessInfoItem) **int64 { return &i.SslRateLimit },
	"Stopping":                    func(i *models.ProcessInfoItem) **int64 { return &i.Stopping },
	"Tasks":                       func(i *models.ProcessInfoItem) **int64 { return &i.Tasks },
	"TotalBytesOut":               func(i *models.ProcessInfoItem) **int64 { return &i.TotalBytesOut },
	"Ulimit-n":                    func(i *models.ProcessInfoItem) **int64 { return &i.Ulimitn },
	"Unstoppable Jobs":            func(i *models.ProcessInfoItem) **int64 { return &i.Unstoppable },
	"Unstoppable_jobs":            func(i *models.ProcessInfoItem) **int64 { return &i.Unstoppable },
	"Uptime_sec":                  func(i *models.ProcessInfoItem) **int64 { return &i.Uptime },
	"ZlibMemUsage":                func(i *models.ProcessInfoItem) **int64 { return &i.ZlibMemUsage },
}

// releaseDateLayout is how `show info` prints Release_date: "2026/10/17".
const releaseDateLayout = "2006/01/02"

// Info returns HAProxy's process information (`show info`) as the Data Plane API's /runtime/info
// answers it: the numeric lines HAProxy prints, version, release date, node and pid. runtimeAPI is
// left empty (the caller knows which socket r talks to); error is left empty too, since a failed
// read is returned as an error instead. A number that does not fit an int64 leaves its field unset.
func Info(ctx context.Context, r socket.Runner) (*models.ProcessInfo, error) {
	info, err := socket.ShowInfo(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("process information: %w", err)
	}
	item := &models.ProcessInfoItem{Version: info["Version"], Node: info["node"]}
	for name, value := range info {
		field, ok := infoFields[name]
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			*field(item) = &n
		}
	}
	if t, err := time.Parse(releaseDateLayout, info["Release_date"]); err == nil {
		item.ReleaseDate = strfmt.Date(t)
	}
	return &models.ProcessInfo{Info: item}, nil
}

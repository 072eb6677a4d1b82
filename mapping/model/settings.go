package model

// Settings are the router-wide settings, named after OpenShift's ROUTER_* environment variables.
type Settings struct {
	// RouterName is this router's name in Route status (ROUTER_NAME).
	RouterName string `json:"routerName" yaml:"routerName"`
	// HTTPPort and HTTPSPort are the public listener ports (ROUTER_SERVICE_HTTP_PORT / _HTTPS_PORT).
	HTTPPort  int `json:"httpPort" yaml:"httpPort"`
	HTTPSPort int `json:"httpsPort" yaml:"httpsPort"`
	// BindAddress is the address the public listeners bind to; empty means all.
	BindAddress string `json:"bindAddress,omitempty" yaml:"bindAddress,omitempty"`
	// MaxConnections is global and default maxconn (ROUTER_MAX_CONNECTIONS); 0 ("auto") renders no
	// maxconn, so HAProxy derives it from its file-descriptor limit.
	MaxConnections int `json:"maxConnections" yaml:"maxConnections"`
	// Threads is nbthread (ROUTER_THREADS); 0 leaves HAProxy's default.
	Threads int `json:"threads,omitempty" yaml:"threads,omitempty"`
	// LoadBalanceAlgorithm is the default balance for http backends (ROUTER_LOAD_BALANCE_ALGORITHM).
	LoadBalanceAlgorithm string `json:"loadBalanceAlgorithm" yaml:"loadBalanceAlgorithm"`
	// TCPBalanceScheme is the default balance for passthrough backends (ROUTER_TCP_BALANCE_SCHEME).
	TCPBalanceScheme string `json:"tcpBalanceScheme" yaml:"tcpBalanceScheme"`
	// Timeouts (ROUTER_DEFAULT_*_TIMEOUT and friends), with HAProxy units.
	Timeouts Timeouts `json:"timeouts" yaml:"timeouts"`
	// CheckInterval is the default server health-check interval (ROUTER_BACKEND_CHECK_INTERVAL).
	CheckInterval string `json:"checkInterval" yaml:"checkInterval"`
	// ForwardedHeaders is the default set-forwarded-headers policy (ROUTER_SET_FORWARDED_HEADERS).
	ForwardedHeaders string `json:"forwardedHeaders" yaml:"forwardedHeaders"`
	// DefaultCertificate names the certificate served when no Route certificate matches; it is
	// provided by the renderer's caller, not by Translate.
	DefaultCertificate string `json:"defaultCertificate" yaml:"defaultCertificate"`
	// BufSize is tune.bufsize; runtime map payloads are chunked below it.
	BufSize int `json:"bufSize" yaml:"bufSize"`
	// SparePoolSize is the number of spare backends kept per kind and balance variant, so that new
	// Routes are served without a reload (HAROUTE_SPARE_BACKENDS).
	SparePoolSize int `json:"sparePoolSize" yaml:"sparePoolSize"`
	// HardStopAfter bounds how long an old worker may live after a reload (ROUTER_HARD_STOP_AFTER).
	HardStopAfter string `json:"hardStopAfter,omitempty" yaml:"hardStopAfter,omitempty"`
}

// Timeouts are HAProxy durations with units, e.g. "5s".
type Timeouts struct {
	Connect       string `json:"connect" yaml:"connect"`
	Client        string `json:"client" yaml:"client"`
	ClientFin     string `json:"clientFin" yaml:"clientFin"`
	Server        string `json:"server" yaml:"server"`
	ServerFin     string `json:"serverFin" yaml:"serverFin"`
	HTTPRequest   string `json:"httpRequest" yaml:"httpRequest"`
	HTTPKeepAlive string `json:"httpKeepAlive" yaml:"httpKeepAlive"`
	Tunnel        string `json:"tunnel" yaml:"tunnel"`
	InspectDelay  string `json:"inspectDelay" yaml:"inspectDelay"`
}

//go:build !unix

package server

// planDescriptors has no descriptor limit to fit where there is no
// RLIMIT_NOFILE.
func planDescriptors(cfg Config) (fdPlan, error) { return fdPlan{cfg.MaxClients, storeFiles}, nil }

// tryMaxClients takes any maxclients.
func tryMaxClients(*Server, Config) error { return nil }

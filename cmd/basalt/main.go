// Command basalt runs the server: a durable Redis-compatible data store.
//
//	basalt [--config FILE] [--port 6379] [--bind 127.0.0.1] [--dir ./basalt-data]
//	       [--appendfsync always|everysec|no] [--requirepass PASS] [--databases 16]
//	       [--maxclients 10000] [--gomaxprocs N] [--pprof 127.0.0.1:6060]
//	       [--node-id N --raft-addr HOST:PORT --initial-cluster ID=HOST:PORT,...
//	        --cluster-secret-file FILE]
//
// Flags are redis.conf directives with two dashes, as redis-server takes them.
//
//	basalt load-rdb [--host H] [--port P] [--replace] ... dump.rdb
//
// loads a Redis RDB file into a running basalt (loadrdb.go).
package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only when --pprof is given
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"basalt/internal/server"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "load-rdb" {
		os.Exit(runLoadRDB(os.Args[2:], os.Stdout, os.Stderr))
	}
	cfg := server.DefaultConfig()
	if err := parseArgs(&cfg, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "basalt:", err)
		os.Exit(2)
	}
	if pprofAddr != "" {
		if err := startPprof(pprofAddr); err != nil {
			fmt.Fprintln(os.Stderr, "basalt: --pprof:", err)
			os.Exit(2)
		}
	}
	if cfg.GoMaxProcs > 0 {
		runtime.GOMAXPROCS(cfg.GoMaxProcs)
	}
	setGC(cfg)
	srv, err := server.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "basalt:", err)
		os.Exit(1)
	}
	if err := srv.Listen(); err != nil {
		fmt.Fprintln(os.Stderr, "basalt:", err)
		srv.Close()
		os.Exit(1)
	}
	slog.Info("basalt ready", "addr", srv.Addr().String(), "dir", cfg.Dir, "appendfsync", cfg.AppendFsync.String())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case s := <-sigs:
			slog.Info("shutting down", "signal", s.String())
		case <-srv.ShutdownRequested():
			slog.Info("shutting down", "by", "SHUTDOWN")
		}
		srv.Close()
	}()
	if err := srv.Serve(); err != nil {
		slog.Error("serve", "err", err)
	}
	srv.Close()
	slog.Info("bye")
}

// parseArgs reads --config FILE first, then --name value pairs that
// override it, as redis-server does.
func parseArgs(cfg *server.Config, args []string) error {
	for i := 0; i < len(args); i++ {
		if args[i] == "--config" || args[i] == "-c" {
			if i+1 >= len(args) {
				return fmt.Errorf("--config needs a file")
			}
			if err := cfg.LoadFile(args[i+1]); err != nil {
				return err
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--config" || a == "-c" {
			i++
			continue
		}
		// --pprof is not a redis.conf directive, so it never reaches cfg.Set.
		if a == "--pprof" {
			if i+1 >= len(args) {
				return fmt.Errorf("--pprof needs an address")
			}
			i++
			pprofAddr = args[i]
			continue
		}
		if a == "-h" || a == "--help" {
			fmt.Println("usage: basalt [--config FILE] [--port N] [--bind ADDR] [--dir DIR] [--appendfsync always|everysec|no] [--requirepass PASS] [--databases N] [--maxclients N] [--gomaxprocs N] [--pprof ADDR]\n             [--node-id N --raft-addr HOST:PORT --initial-cluster ID=HOST:PORT,... --cluster-secret-file FILE] (docs/replication.md)\n       basalt load-rdb [--host H] [--port P] [--replace] ... dump.rdb (load-rdb --help)")
			os.Exit(0)
		}
		if !strings.HasPrefix(a, "--") {
			return fmt.Errorf("unexpected argument %q", a)
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		if !hasValue {
			if i+1 >= len(args) {
				return fmt.Errorf("%s needs a value", a)
			}
			i++
			value = args[i]
		}
		if err := cfg.Set(name, value); err != nil {
			return fmt.Errorf("--%s: %v", name, err)
		}
	}
	return nil
}

// pprofAddr is where --pprof serves net/http/pprof (empty: not served).
var pprofAddr string

// startPprof serves the Go profiler on a loopback address only: profiles
// expose internals, so they must not be reachable from the network.
func startPprof(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	slog.Info("pprof", "addr", ln.Addr().String())
	go http.Serve(ln, nil)
	return nil
}

// setGC lets the Go heap grow to three times what is live between
// collections (Go's default is twice), unless GOGC or GOMEMLIMIT say
// otherwise. Every command allocates a little (arguments, replies, keys),
// so collections come often while little is live, and each one costs all
// cores some time: SET spent 0.89-0.97x the CPU per request, EVALSHA
// 0.97x (0.86x with GOGC=400, which doubles the heap). The limit bounds
// the heap whatever is live, above the two caches (the block cache is on
// the Go heap only in a build without cgo).
func setGC(cfg server.Config) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(200)
	debug.SetMemoryLimit(1<<30 + 4*max(cfg.MetaCacheSize, 0) + max(cfg.CacheSize, 0))
}

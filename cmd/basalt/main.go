// Command basalt runs the server: a durable Redis-compatible data store.
//
//	basalt [/path/to/redis.conf] [--name value ...] [-]
//	basalt --config FILE [--port 6379] [--bind 127.0.0.1] [--dir ./basalt-data] ...
//
// Flags are redis.conf directives with two dashes, as redis-server takes
// them (docs/configuration.md); --version and --help print what
// redis-server's do.
//
//	basalt load-rdb [--host H] [--port P] [--replace] ... dump.rdb
//
// loads a Redis RDB file into a running basalt (loadrdb.go).
package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only when --pprof is given
	"os"
	"os/signal"
	"runtime"
	"strconv"
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
		os.Exit(1)
	}
	logs, err := server.SetupLogging(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "basalt:", err)
		os.Exit(1)
	}
	defer logs.Close()
	if pprofAddr != "" {
		if err := startPprof(pprofAddr); err != nil {
			fmt.Fprintln(os.Stderr, "basalt: --pprof:", err)
			os.Exit(2)
		}
	}
	if cfg.GoMaxProcs > 0 {
		runtime.GOMAXPROCS(cfg.GoMaxProcs)
	}
	server.SetGC(cfg)
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
	if cfg.MetricsAddr != "" {
		addr, err := srv.ServeMetrics(cfg.MetricsAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "basalt: metrics-addr:", err)
			srv.Close()
			os.Exit(1)
		}
		slog.Info("metrics", "addr", addr)
	}
	removePid := server.WritePidFile(cfg.PidFile)
	defer removePid()
	server.NotifyReady(cfg)
	slog.Info("basalt ready", "addrs", strings.Join(srv.Addrs(), " "), "dir", cfg.Dir, "appendfsync", cfg.AppendFsync.String())

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

const usage = `Usage: basalt [/path/to/redis.conf] [options] [-]
       basalt - (read config from stdin)
       basalt -v or --version
       basalt -h or --help
       basalt load-rdb [--host H] [--port P] [--replace] ... dump.rdb (load-rdb --help)

Any redis.conf directive is an option: --name value [value ...]. Options
come after the config file and override it. basalt's own options:
       --config FILE     read FILE first, as a positional file is read
       --pprof ADDR      serve Go's profiler on a loopback address
       --metrics-addr HOST:PORT  serve Prometheus metrics on /metrics
       --log-format text|json
       --node-id N --raft-addr HOST:PORT --initial-cluster ID=HOST:PORT,... --cluster-secret-file FILE
                         replication (docs/replication.md)
See docs/configuration.md for every directive and what basalt does with it.

Examples:
       basalt (run the server with default settings)
       echo 'maxmemory 128mb' | basalt -
       basalt /etc/redis/redis.conf
       basalt --port 7777
       basalt --bind "127.0.0.1 ::1" --unixsocket /tmp/basalt.sock
       basalt /etc/myredis.conf --loglevel verbose -
`

// parseArgs reads the config file (the first argument, as redis-server
// takes it, or --config FILE), then the options, turned into config lines
// that override it, then standard input when the last argument is "-".
func parseArgs(cfg *server.Config, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if err := cfg.LoadFile(args[0]); err != nil {
			return err
		}
		args = args[1:]
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--config" || args[i] == "-c" {
			if err := cfg.LoadFile(args[i+1]); err != nil {
				return err
			}
		}
	}
	var lines [][]string
	stdin := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-v" || a == "--version":
			fmt.Printf("basalt server v=%s redis=%s go=%s bits=%d\n", server.BasaltVersion, server.RedisVersion, runtime.Version(), strconv.IntSize)
			os.Exit(0)
		case a == "-h" || a == "--help":
			fmt.Print(usage)
			os.Exit(0)
		case a == "-" && i == len(args)-1:
			stdin = true
			continue
		case a == "--config" || a == "-c":
			i++
			continue
		case a == "--pprof": // not a directive: it never reaches the config
			if i+1 >= len(args) {
				return fmt.Errorf("--pprof needs an address")
			}
			i++
			pprofAddr = args[i]
			continue
		case !strings.HasPrefix(a, "--"):
			if len(lines) == 0 {
				return fmt.Errorf("unexpected argument %q (the config file comes first)", a)
			}
			last := &lines[len(lines)-1]
			*last = append(*last, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		lines = append(lines, []string{name})
		if hasValue {
			lines[len(lines)-1] = append(lines[len(lines)-1], value)
		}
	}
	for _, words := range lines {
		if err := cfg.Directive(words); err != nil {
			return fmt.Errorf("--%s: %v", words[0], err)
		}
	}
	if stdin {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		return cfg.LoadText(string(data), "standard input")
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

package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
)

// The log: log/slog with Redis's levels, to logfile or standard output,
// as text or JSON (log-format); the pidfile; systemd's readiness.

// logLevels are loglevel's values on slog's scale: verbose sits between
// debug and notice (slog's Info).
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "verbose": slog.LevelDebug + 2, "notice": slog.LevelInfo, "warning": slog.LevelWarn}

// logLevel is the running loglevel; CONFIG SET loglevel changes it.
var logLevel slog.LevelVar

func setLogLevel(name string) { logLevel.Set(logLevels[name]) }

// levelName writes a record's level under Redis's name.
func levelName(_ []string, a slog.Attr) slog.Attr {
	if a.Key != slog.LevelKey {
		return a
	}
	level := a.Value.Any().(slog.Level)
	for name, l := range logLevels {
		if l == level {
			return slog.String(slog.LevelKey, name)
		}
	}
	if level > slog.LevelWarn {
		return slog.String(slog.LevelKey, "error")
	}
	return a
}

// SetupLogging makes slog's default logger follow loglevel, logfile and
// log-format. The caller closes what it returns at exit.
func SetupLogging(cfg Config) (io.Closer, error) {
	var out io.Writer = os.Stdout
	var closer io.Closer = io.NopCloser(nil)
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("Can't open the log file: %v", err)
		}
		out, closer = f, f
	}
	setLogLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: &logLevel, ReplaceAttr: levelName}
	var h slog.Handler = slog.NewTextHandler(out, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(out, opts)
	}
	slog.SetDefault(slog.New(h))
	for _, name := range cfg.NotApplied {
		slog.Info("config: accepted, not applied", "directive", name, "why", WhyNotApplied(name))
	}
	return closer, nil
}

// WritePidFile writes the process ID to pidfile, if set; remove deletes it
// at exit. As Redis, a pidfile that cannot be written is only logged.
func WritePidFile(path string) (remove func()) {
	if path == "" {
		return func() {}
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		slog.Warn("failed to write pidfile", "path", path, "err", err)
		return func() {}
	}
	return func() { os.Remove(path) }
}

// NotifyReady tells systemd that basalt serves, as redis-server does with
// supervised systemd (or auto, when systemd started it): a unit of
// Type=notify, as Debian's redis-server.service, waits for it.
func NotifyReady(cfg Config) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" || cfg.Supervised != "systemd" && cfg.Supervised != "auto" {
		return
	}
	if path[0] == '@' {
		path = "\x00" + path[1:] // an abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		slog.Warn("systemd notification failed", "err", err)
		return
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("STATUS=Ready to accept connections\nREADY=1\n")); err != nil {
		slog.Warn("systemd notification failed", "err", err)
	}
}

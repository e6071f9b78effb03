package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"basalt/internal/resp"
	"basalt/internal/shard"
	"basalt/internal/store"
)

// Config holds the server's settings, named as redis-server names them.
type Config struct {
	Bind            string
	Port            int
	Dir             string
	AppendFsync     shard.Fsync
	RequirePass     string
	Databases       int
	MaxClients      int
	ProtoMaxBulkLen int64
	GoMaxProcs      int
	LogRetain       int64  // records the log keeps after applying them (0: all)
	CacheSize       int64  // Pebble block cache, bytes
	MetaCacheSize   int64  // in-memory metadata cache, bytes (0: off)
	File            string // the --config file, which CONFIG REWRITE updates ("" none)
}

// DefaultConfig is what `basalt` with no flags uses.
func DefaultConfig() Config {
	return Config{
		Bind:            "127.0.0.1",
		Port:            6379,
		Dir:             "./basalt-data",
		AppendFsync:     shard.FsyncAlways,
		Databases:       16,
		MaxClients:      10000,
		ProtoMaxBulkLen: resp.DefaultMaxBulk,
		LogRetain:       100000,
		CacheSize:       store.DefaultCacheSize,
		MetaCacheSize:   store.DefaultMetaCacheSize,
	}
}

// Set applies one setting by its redis.conf name. It is used by the
// command line, the config file and CONFIG SET.
func (c *Config) Set(name, value string) error {
	switch strings.ToLower(name) {
	case "bind":
		c.Bind = strings.Fields(value)[0]
	case "port":
		return setInt(&c.Port, value, 0, 65535)
	case "dir":
		c.Dir = value
	case "appendfsync":
		f, ok := shard.ParseFsync(strings.ToLower(value))
		if !ok {
			return fmt.Errorf("argument(s) must be one of the following: everysec, always, no")
		}
		c.AppendFsync = f
	case "requirepass":
		c.RequirePass = value
	case "databases":
		return setInt(&c.Databases, value, 1, 65535)
	case "maxclients":
		return setInt(&c.MaxClients, value, 1, 1<<32-1)
	case "proto-max-bulk-len":
		n, err := parseMemory(value)
		if err != nil {
			return fmt.Errorf("argument must be a memory value")
		}
		if n < 1024*1024 {
			return fmt.Errorf("argument must be between 1048576 and 9223372036854775807 inclusive")
		}
		c.ProtoMaxBulkLen = n
	case "gomaxprocs":
		return setInt(&c.GoMaxProcs, value, 0, 1024)
	case "meta-cache-size":
		n, err := parseMemory(value)
		if err != nil || n < 0 {
			return fmt.Errorf("argument must be a memory value")
		}
		c.MetaCacheSize = n
	case "cache-size":
		n, err := parseMemory(value)
		if err != nil || n < 1<<20 {
			return fmt.Errorf("argument must be a memory value of at least 1mb")
		}
		c.CacheSize = n
	case "log-retain":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("argument must be a non-negative integer")
		}
		c.LogRetain = n
	default:
		return fmt.Errorf("unknown option '%s'", name)
	}
	return nil
}

// Get returns a setting's value as CONFIG GET shows it; ok is false for an
// unknown name.
func (c *Config) Get(name string) (string, bool) {
	switch name {
	case "bind":
		return c.Bind, true
	case "port":
		return strconv.Itoa(c.Port), true
	case "dir":
		return c.Dir, true
	case "appendfsync":
		return c.AppendFsync.String(), true
	case "requirepass":
		return c.RequirePass, true
	case "databases":
		return strconv.Itoa(c.Databases), true
	case "maxclients":
		return strconv.Itoa(c.MaxClients), true
	case "proto-max-bulk-len":
		return strconv.FormatInt(c.ProtoMaxBulkLen, 10), true
	case "gomaxprocs":
		return strconv.Itoa(c.GoMaxProcs), true
	case "log-retain":
		return strconv.FormatInt(c.LogRetain, 10), true
	case "cache-size":
		return strconv.FormatInt(c.CacheSize, 10), true
	case "meta-cache-size":
		return strconv.FormatInt(c.MetaCacheSize, 10), true
	}
	return "", false
}

// ConfigNames lists the settings in the order CONFIG GET * returns them.
var ConfigNames = []string{"bind", "port", "dir", "appendfsync", "requirepass", "databases",
	"maxclients", "proto-max-bulk-len", "gomaxprocs", "log-retain", "cache-size", "meta-cache-size"}

func setInt(dst *int, value string, lo, hi int) error {
	n, err := strconv.Atoi(value)
	if err != nil {
		return fmt.Errorf("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi { // Redis's CONFIG SET wording
		return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	*dst = n
	return nil
}

// parseMemory reads a redis.conf memory value: 1024, 1k, 1kb, 1m, 1mb, 1g, 1gb.
func parseMemory(s string) (int64, error) {
	s = strings.ToLower(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1024}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000000}, {"g", 1000000000}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// LoadFile reads a redis.conf-style file: one "name value..." per line, #
// comments, quoted values.
func (c *Config) LoadFile(path string) error {
	if abs, err := filepath.Abs(path); err == nil {
		c.File = abs // CONFIG REWRITE writes here
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		args, ok := resp.SplitArgs([]byte(text))
		if !ok || len(args) < 2 {
			return fmt.Errorf("%s:%d: bad directive %q", path, line, text)
		}
		parts := make([]string, len(args)-1)
		for i, a := range args[1:] {
			parts[i] = string(a)
		}
		if err := c.Set(string(args[0]), strings.Join(parts, " ")); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	return sc.Err()
}

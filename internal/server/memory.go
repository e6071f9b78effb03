package server

import (
	"os"
	"runtime"
	"runtime/debug"
)

// maxmemory bounds what basalt keeps in memory: its two caches and the Go
// heap. Data lives on disk, so nothing is evicted (maxmemory-policy is
// kept for CONFIG GET); docs/configuration.md says what each policy means.

// boundCaches shrinks the caches to fit maxmemory: the block cache to
// half of it, the metadata cache to an eighth (its entries cost about
// four times their bytes on the heap), leaving the rest to clients,
// scripts and Pebble's memtables.
func boundCaches(cfg *Config) {
	if cfg.MaxMemory <= 0 {
		return
	}
	cfg.CacheSize = max(min(cfg.CacheSize, cfg.MaxMemory/2), 1<<20)
	cfg.MetaCacheSize = min(cfg.MetaCacheSize, cfg.MaxMemory/8)
}

// SetGC lets the Go heap grow to three times what is live between
// collections (Go's default is twice), and bounds it by maxmemory, or
// else by the caches and a gigabyte, unless GOGC or GOMEMLIMIT say
// otherwise. Every command allocates a little (arguments, replies, keys),
// so collections come often while little is live, and each one costs all
// cores some time: SET spent 0.89-0.97x the CPU per request, EVALSHA
// 0.97x (0.86x with GOGC=400, which doubles the heap). The block cache is
// on the Go heap only in a build without cgo.
func SetGC(cfg Config) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(200)
	setMemoryLimit(cfg)
}

// setMemoryLimit is Go's soft memory limit for the running maxmemory.
func setMemoryLimit(cfg Config) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if cfg.MaxMemory > 0 {
		debug.SetMemoryLimit(cfg.MaxMemory)
		return
	}
	debug.SetMemoryLimit(1<<30 + 4*max(cfg.MetaCacheSize, 0) + max(cfg.CacheSize, 0))
}

func setGoMaxProcs(n int) {
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

package server

import (
	"os"
	"runtime"
	"runtime/debug"
	"time"
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

// spikeBytes is what a command's arguments or replies weigh from which,
// once it is done, the memory it took goes back to the OS soon: with a
// small live heap the next collection may be minutes away, and a 100 MB
// SET or GET left the process's RSS over 1 GB until then.
const spikeBytes = 32 << 20

var spikes = make(chan struct{}, 1)

func init() { go releaseSpikes() }

// memorySpike asks for the memory of a big command to be returned.
func memorySpike() {
	select {
	case spikes <- struct{}{}:
	default:
	}
}

// releaseSpikes collects and returns freed memory to the OS a moment
// after a spike (the rest of a burst is done by then), at most once a
// second: a collection costs in proportion to the live heap, not to the
// garbage.
func releaseSpikes() {
	for range spikes {
		time.Sleep(100 * time.Millisecond)
		debug.FreeOSMemory()
		time.Sleep(time.Second)
	}
}

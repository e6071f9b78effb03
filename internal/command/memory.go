package command

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"basalt/internal/num"
	"basalt/internal/store"
)

// MEMORY: the process's memory as Go's runtime sees it, and MEMORY USAGE,
// the bytes a key takes in the store. basalt keeps its data in Pebble, not
// in RAM, so a key's "usage" is what it occupies stored (key, metadata and
// member entries, before compression): the figure that ranks big keys,
// which is what redis-cli --memkeys and dashboards use it for.

func init() {
	stats := func(name, summary string, tips ...string) *Command {
		return &Command{Name: "memory|" + name, Arity: 2, Group: "server", Since: "4.0.0", Summary: summary, Tips: tips}
	}
	special := []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}
	register(&Command{Name: "memory", Arity: -2, Group: "server", Since: "4.0.0", Summary: "A container for memory diagnostics commands", Run: cmdMemory,
		Subcommands: []*Command{
			{Name: "memory|help", Arity: 2, Flags: Loading | Stale, Group: "server", Since: "4.0.0", Summary: "Show helpful text about the different subcommands", Run: cmdMemoryHelp},
			withRun(stats("malloc-stats", "Show allocator internal stats", special...), cmdMemoryMallocStats),
			withRun(stats("doctor", "Outputs memory problems report", special...), cmdMemoryDoctor),
			withRun(stats("purge", "Ask the allocator to release memory", "request_policy:all_shards", "response_policy:all_succeeded"), cmdMemoryPurge),
			withRun(stats("stats", "Show memory usage details", special...), cmdMemoryStats),
			{Name: "memory|usage", Arity: -3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, Group: "server", Since: "4.0.0",
				Summary: "Estimate the memory usage of a key", KeySpecs: []KeySpec{{Flags: []string{"RO"}, Index: 2, KeyStep: 1}}, Run: cmdMemoryUsage},
		}})
}

func withRun(c *Command, run func(*Ctx)) *Command { c.Run = run; return c }

func cmdMemory(c *Ctx) { table["memory"].Subcommand(c.Args[1]).Run(c) }

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func cmdMemoryHelp(c *Ctx) {
	HelpReply(c.W, memoryHelp)
}

// entryOverhead is what Pebble adds to every entry besides its key and
// value: the 8-byte sequence number and kind, and the length prefixes.
const entryOverhead = 12

// cmdMemoryUsage answers MEMORY USAGE key [SAMPLES count]: the key's
// metadata entry plus its member entries. Big collections are sampled as
// in Redis: the first count members' average size times the number of
// members (SAMPLES 0 reads them all).
func cmdMemoryUsage(c *Ctx) {
	samples := int64(5)
	for i := 3; i < len(c.Args); i++ {
		if !strings.EqualFold(c.Arg(i), "samples") || i+1 >= len(c.Args) {
			c.W.Error(ErrSyntax)
			return
		}
		n, ok := num.ParseInt(c.Args[i+1])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		if n < 0 {
			c.W.Error(ErrSyntax)
			return
		}
		samples = n
		i++
	}
	key := c.Args[2]
	m, ok := c.Tx.Lookup(key)
	if !ok {
		c.W.Null()
		return
	}
	size := int64(len(key) + 9 + len(m.Body) + entryOverhead)
	if !m.HasMembers() {
		c.W.Int(size)
		return
	}
	entries := memberEntries(m)
	var read, bytes int64
	c.Tx.Members(key, nil, nil, false, func(sub, value []byte) bool {
		read++
		bytes += int64(len(key) + len(sub) + len(value) + entryOverhead)
		return samples == 0 || read < samples*entriesPerMember(m)
	})
	if read > 0 && entries > read {
		bytes = bytes * entries / read
	}
	c.W.Int(size + bytes)
}

// memberEntries is how many member entries m's header says the key has;
// 0 when only reading them all would tell (a stream's groups).
func memberEntries(m store.Meta) int64 {
	switch m.Type {
	case store.TypeString:
		return (m.StringLen() + store.ChunkSize - 1) / store.ChunkSize
	case store.TypeList:
		return decodeListHeader(m.Body).count
	case store.TypeHash, store.TypeSet, store.TypeZSet:
		return decodeSizeHeader(m.Body).n * entriesPerMember(m)
	case store.TypeStream:
		return int64(decodeStreamHeader(m.Body).nodes)
	}
	return 0
}

// entriesPerMember: a sorted set keeps each member twice, by name and by
// score.
func entriesPerMember(m store.Meta) int64 {
	if m.Type == store.TypeZSet {
		return 2
	}
	return 1
}

// peakHeap is the largest heap MEMORY STATS has seen (Go keeps no peak).
var peakHeap atomic.Uint64

func heapStats() (runtime.MemStats, uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for {
		p := peakHeap.Load()
		if ms.HeapAlloc <= p || peakHeap.CompareAndSwap(p, ms.HeapAlloc) {
			return ms, max(p, ms.HeapAlloc)
		}
	}
}

// cmdMemoryStats answers with Redis's fields, in Redis's order, from Go's
// runtime: allocated is the live heap, active the heap's spans in use,
// resident what the runtime holds from the OS. The parts basalt has none
// of (replication backlog, AOF buffer, per-database hash tables) are 0.
func cmdMemoryStats(c *Ctx) {
	ms, peak := heapStats()
	alloc := ms.HeapAlloc
	overhead := ms.Sys - ms.HeapAlloc
	keys := int64(0)
	type dbKeys struct{ db, n, expires int64 }
	var dbs []dbKeys
	saved := c.Tx.DB
	for db := range c.Tx.Databases() {
		c.Tx.DB = db
		if n := c.Tx.Count(); n > 0 {
			dbs = append(dbs, dbKeys{int64(db), n, c.Tx.Expires()})
			keys += n
		}
	}
	c.Tx.DB = saved
	ratio := func(a, b uint64) float64 { return float64(a) / float64(max(b, 1)) }
	c.W.MapLen(27 + len(dbs))
	field := func(name string, v uint64) { c.W.Simple(name); c.W.Int(int64(v)) }
	float := func(name string, v float64) { c.W.Simple(name); c.W.Double(v) }
	field("peak.allocated", peak)
	field("total.allocated", alloc)
	field("startup.allocated", 0)
	field("replication.backlog", 0)
	field("clients.slaves", 0)
	field("clients.normal", 0)
	field("cluster.links", 0)
	field("aof.buffer", 0)
	field("lua.caches", 0)
	field("functions.caches", 0)
	for _, d := range dbs {
		c.W.Simple(fmt.Sprintf("db.%d", d.db))
		c.W.MapLen(3)
		field("overhead.hashtable.main", 0)
		field("overhead.hashtable.expires", 0)
		field("overhead.hashtable.slot-to-keys", 0)
	}
	field("overhead.total", overhead)
	field("keys.count", uint64(keys))
	field("keys.bytes-per-key", alloc/uint64(max(keys, 1)))
	field("dataset.bytes", alloc)
	float("dataset.percentage", 100)
	float("peak.percentage", 100*ratio(alloc, peak))
	field("allocator.allocated", alloc)
	field("allocator.active", ms.HeapInuse)
	field("allocator.resident", ms.Sys)
	float("allocator-fragmentation.ratio", ratio(ms.HeapInuse, alloc))
	field("allocator-fragmentation.bytes", ms.HeapInuse-min(alloc, ms.HeapInuse))
	float("allocator-rss.ratio", ratio(ms.Sys, ms.HeapInuse))
	field("allocator-rss.bytes", ms.Sys-min(ms.HeapInuse, ms.Sys))
	float("rss-overhead.ratio", 1)
	field("rss-overhead.bytes", 0)
	float("fragmentation", ratio(ms.Sys, alloc))
	field("fragmentation.bytes", ms.Sys-min(alloc, ms.Sys))
}

// doctorEmpty is Redis's reply when there is too little data to judge.
const doctorEmpty = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting."

// cmdMemoryDoctor: Redis's doctor looks at the allocator's fragmentation
// and the clients' buffers, which in basalt are Go's business; it reports
// on an instance under 5 MB as Redis does and finds no issue otherwise.
func cmdMemoryDoctor(c *Ctx) {
	ms, _ := heapStats()
	if ms.HeapAlloc < 5<<20 {
		c.W.Verbatim("txt", doctorEmpty)
		return
	}
	c.W.Verbatim("txt", "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.")
}

// cmdMemoryMallocStats answers as Redis built without jemalloc does.
func cmdMemoryMallocStats(c *Ctx) {
	c.W.BulkString("Stats not supported for the current allocator")
}

// cmdMemoryPurge returns freed memory to the operating system.
func cmdMemoryPurge(c *Ctx) {
	debug.FreeOSMemory()
	c.W.OK()
}

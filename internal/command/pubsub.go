package command

import "strings"

// Pub/sub commands. They need the connection and the server's hub, so they
// run in package server (flag Conn); their table entries live here.
func init() {
	const (
		subFlags = Conn | PubSub | NoScript | Loading | Stale
		pubFlags = Conn | PubSub | Loading | Stale | Fast
		introFl  = PubSub | Loading | Stale
	)
	// Shard channels are keys for slot routing only: COMMAND INFO shows them
	// as "not_key" key specs.
	shardSpec := func(last int) []KeySpec {
		return []KeySpec{{Flags: []string{"not_key"}, Index: 1, LastKey: last, KeyStep: 1}}
	}
	intro := func(name string, arity int, flags Flags, since, summary string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, Since: since, Group: "pubsub", Summary: summary}
	}
	register(
		&Command{Name: "publish", Arity: 3, Flags: pubFlags, Group: "pubsub", Since: "2.0.0", Summary: "Post a message to a channel"},
		&Command{Name: "spublish", Arity: 3, Flags: pubFlags, FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: shardSpec(0), Group: "pubsub", Since: "7.0.0", Summary: "Post a message to a shard channel"},
		&Command{Name: "subscribe", Arity: -2, Flags: subFlags, Group: "pubsub", Since: "2.0.0", Summary: "Listen for messages published to the given channels"},
		&Command{Name: "unsubscribe", Arity: -1, Flags: subFlags, Group: "pubsub", Since: "2.0.0", Summary: "Stop listening for messages posted to the given channels"},
		&Command{Name: "psubscribe", Arity: -2, Flags: subFlags, Group: "pubsub", Since: "2.0.0", Summary: "Listen for messages published to channels matching the given patterns"},
		&Command{Name: "punsubscribe", Arity: -1, Flags: subFlags, Group: "pubsub", Since: "2.0.0", Summary: "Stop listening for messages posted to channels matching the given patterns"},
		&Command{Name: "ssubscribe", Arity: -2, Flags: subFlags, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: shardSpec(-1), Group: "pubsub", Since: "7.0.0", Summary: "Listen for messages published to the given shard channels"},
		&Command{Name: "sunsubscribe", Arity: -1, Flags: subFlags, FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: shardSpec(-1), Group: "pubsub", Since: "7.0.0", Summary: "Stop listening for messages posted to the given shard channels"},
		&Command{Name: "pubsub", Arity: -2, Flags: Conn, Group: "pubsub", Since: "2.8.0", Summary: "A container for Pub/Sub commands", Subcommands: []*Command{
			intro("pubsub|channels", -2, introFl, "2.8.0", "List active channels"),
			intro("pubsub|numpat", 2, introFl, "2.8.0", "Get the count of unique patterns pattern subscriptions"),
			intro("pubsub|numsub", -2, introFl, "2.8.0", "Get the count of subscribers for channels"),
			intro("pubsub|shardchannels", -2, introFl, "7.0.0", "List active shard channels"),
			intro("pubsub|shardnumsub", -2, introFl, "7.0.0", "Get the count of subscribers for shard channels"),
			intro("pubsub|help", 2, Loading|Stale, "6.2.0", "Show helpful text about the different subcommands"),
		}},
	)
}

// PublishArgs reads the arguments of a PUBLISH: PUBLISH channel message, or
// RAFT PUBLISH origin channel message, the form in which a node sends its
// client's PUBLISH to the leader (see server/pubsub_cluster.go). ok is
// false for any other command.
func PublishArgs(argv [][]byte) (channel, message, origin []byte, ok bool) {
	switch {
	case len(argv) == 3 && strings.EqualFold(string(argv[0]), "publish"):
		return argv[1], argv[2], nil, true
	case len(argv) == 5 && strings.EqualFold(string(argv[0]), "raft") && strings.EqualFold(string(argv[1]), "publish"):
		return argv[3], argv[4], argv[2], true
	}
	return nil, nil, nil, false
}

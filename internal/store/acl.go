package store

// The ACL users (ACL SETUSER, DELUSER, LOAD) are data of the whole
// server, as function libraries are: one state entry holds them, in the
// form of an ACL file, written through the log, so every replica has them,
// a snapshot carries them and a restart finds them.
var aclKey = stateKey("acl")

// PutACL stores the users, as ACL SAVE writes them.
func (t *Tx) PutACL(text []byte) {
	t.mustWrite()
	t.aclWritten = true
	t.set(aclKey, text)
}

// ACL returns the users stored, if any were.
func (t *Tx) ACL() ([]byte, bool) { return t.get(aclKey) }

// ACLGen changes when a commit or a snapshot changed the users stored: a
// server compares it with the one it loaded.
func (s *Store) ACLGen() uint64 { return s.aclGen.Load() }

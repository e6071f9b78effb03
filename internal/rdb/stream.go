package rdb

// Stream is a decoded stream (not decoded yet: see ErrStream).
type Stream struct{}

func (r *reader) stream(v2 bool) (*Value, error) { return nil, ErrStream }

func appendStream(b []byte, s *Stream) []byte { panic("rdb: streams are not encoded") }

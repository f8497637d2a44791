package knowledge

import (
	"fmt"
	"slices"
)

// DefaultMaxFieldBytes is the default bound on one stored field value: the
// bytes of its JSON encoding. Every read of an entity carries its snapshot,
// so one huge value (a 10 MB name) would slow every later read of the
// user's entities; 64 KiB holds any real name, address or note.
const DefaultMaxFieldBytes = 64 << 10

// checkFieldSizes refuses the first value of fields whose JSON encoding is
// longer than the service's bound, naming it as prefix.<key> (in key
// order, so that the error is the same on every call). It runs before
// anything is written, so an oversized field refuses the whole call.
func (s *Service) checkFieldSizes(prefix string, fields map[string]any) error {
	for _, k := range sortedKeys(fields) {
		if err := s.checkFieldSize(prefix+"."+k, fields[k]); err != nil {
			return err
		}
	}
	return nil
}

// checkFieldSize refuses v when its JSON encoding is longer than the
// service's bound. The error names the deepest member of v that is over
// the bound by itself (path.address.street rather than path.address), or
// path when no single member is.
func (s *Service) checkFieldSize(path string, v any) error {
	n := encodedLen(v)
	if n <= s.maxFieldBytes {
		return nil
	}
	for {
		child, ok := s.oversizedMember(path, v)
		if !ok {
			break
		}
		path, v = child.path, child.v
		n = encodedLen(v)
	}
	return invalid(path, fmt.Sprintf("a value of at most %d bytes as JSON", s.maxFieldBytes), fmt.Sprintf("%d bytes", n),
		"is %d bytes as JSON; a field's value may be at most %d bytes (the server's --max-field-bytes)", n, s.maxFieldBytes)
}

// member is a value inside an object or array field, with its path.
type member struct {
	path string
	v    any
}

// oversizedMember returns the first member of an object or array value that
// is over the bound by itself.
func (s *Service) oversizedMember(path string, v any) (member, bool) {
	var members []member
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			members = append(members, member{path + "." + k, x[k]})
		}
	case []any:
		for i, e := range x {
			members = append(members, member{fmt.Sprintf("%s[%d]", path, i), e})
		}
	}
	i := slices.IndexFunc(members, func(m member) bool { return encodedLen(m.v) > s.maxFieldBytes })
	if i < 0 {
		return member{}, false
	}
	return members[i], true
}

// encodedLen is the length of v's JSON encoding as it is stored (see
// canonicalJSON). A value that cannot be encoded counts as 0: encoding
// refuses it later with its own error.
func encodedLen(v any) int {
	b, err := canonicalJSON(v)
	if err != nil {
		return 0
	}
	return len(b)
}

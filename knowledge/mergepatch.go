package knowledge

// MergePatch applies a JSON merge patch (RFC 7396) to target and returns the
// result: when patch is an object, its members are merged into target
// recursively (target becomes an object if it was not one), a null member
// deletes the member of that name, and any other value replaces it; any
// non-object patch replaces target whole. Neither argument is modified.
//
// Values are what encoding/json decodes into any: map[string]any, []any,
// string, float64 or json.Number, bool and nil.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = MergePatch(out[k], v)
	}
	return out
}

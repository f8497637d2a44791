package knowledge_test

import (
	"encoding/json"
	"fmt"

	"github.com/cairnkg/cairn/knowledge"
)

// ExampleMergePatch shows how update_profile merges: objects merge
// recursively, null deletes, anything else replaces.
func ExampleMergePatch() {
	var profile, patch any
	_ = json.Unmarshal([]byte(`{"name":"Ada","preferences":{"coffee":"black","dietary":["vegetarian"]}}`), &profile)
	_ = json.Unmarshal([]byte(`{"preferences":{"coffee":null,"dietary":["vegan"]},"city":"Lyon"}`), &patch)
	out, _ := json.Marshal(knowledge.MergePatch(profile, patch))
	fmt.Println(string(out))
	// Output: {"city":"Lyon","name":"Ada","preferences":{"dietary":["vegan"]}}
}

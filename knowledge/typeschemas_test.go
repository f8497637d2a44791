package knowledge_test

import (
	"errors"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// A store's TypeSchemas give a type nobody registered its schema in place
// of the inferred one: checked like a registered one, created as the
// user's own 1.0, and ignored once the type has a schema.
func TestStoreTypeSchemas(t *testing.T) {
	schemaServices(t, func(t *testing.T, s *knowledge.Service, _ *clock) {
		ctx := t.Context()
		given := &schema.Schema{EntityType: "meal", Fields: map[string]schema.Field{
			"food":  {Type: schema.TypeString, Identifier: true},
			"eaten": {Type: schema.TypeDate, EventType: "MealEaten"},
		}, IdentityFields: []string{"food"}, NameFields: []string{"food"}}
		bad := &schema.Schema{EntityType: "meal", Fields: map[string]schema.Field{"food": {Type: schema.TypeString, EventType: "X"}}}
		_, err := s.Store(ctx, alice, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "meal", "food": "soup"}},
			TypeSchemas: map[string]*schema.Schema{"meal": bad}})
		var verr *knowledge.ValidationError
		if !errors.As(err, &verr) || verr.Field != "schema_definition.fields.food.event_type" {
			t.Fatalf("a bad schema: err = %v, want a validation error on its event_type", err)
		}
		res, err := s.Store(ctx, alice, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "Meal", "food": "pizza", "eaten": "2026-02-12"}},
			TypeSchemas: map[string]*schema.Schema{"meal": given}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.SchemasCreated) != 1 || res.SchemasCreated[0].Version != "1.0" || res.SchemasCreated[0].Scope() != "user" ||
			res.SchemasCreated[0].Fields["eaten"].EventType != "MealEaten" {
			t.Fatalf("schemas created = %+v", res.SchemasCreated)
		}
		events, _, err := s.Timeline(ctx, alice, knowledge.TimelineQuery{EntityID: res.Entities[0].EntityID})
		if err != nil || len(events) != 1 || events[0].EventType != "MealEaten" {
			t.Fatalf("timeline = %+v, %v; want one MealEaten from the first store", events, err)
		}
		// The type has a schema now: a different one given is ignored.
		res, err = s.Store(ctx, alice, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "meal", "food": "rice"}},
			TypeSchemas: map[string]*schema.Schema{"meal": bad}})
		if err != nil || len(res.SchemasCreated) != 0 {
			t.Fatalf("store of a known type with TypeSchemas: %+v, %v", res.SchemasCreated, err)
		}
	})
}

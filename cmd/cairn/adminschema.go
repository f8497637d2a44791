package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// The schema commands of cairn admin: the operator's way to register global
// schemas and to switch a user's auto-enhancement.

// schemaOwner is the owner id of the schemas a command acts on: --user's,
// or "" (global) without --user when global is true.
func (a *admin) schemaOwner(ctx context.Context, global bool) (string, error) {
	if a.f.user == "" && global {
		return "", nil
	}
	u, err := a.user(ctx)
	return u.ID, err
}

func (a *admin) schemaList(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	set, err := schema.NewPersistentRegistry(a.store).For(ctx, u.ID)
	if err != nil {
		return err
	}
	a.table("TYPE\tVERSION\tSCOPE\tIDENTITY\tFIELDS", func(w io.Writer) {
		for _, sc := range set.All() {
			scope := sc.Scope()
			if _, builtin := schema.NewRegistry().Builtin(sc.EntityType); builtin && sc.Owner == "" && sc.Version == "1.0" {
				scope = "built-in"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", sc.EntityType, sc.Version, scope, strings.Join(sc.IdentityFields, ","), strings.Join(sc.FieldNames(), ","))
		}
	})
	return nil
}

func (a *admin) schemaRegister(ctx context.Context) error {
	path, err := a.arg("schema file")
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sc schema.Schema
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return usageError{fmt.Sprintf("schema file %s: %v", path, err)}
	}
	owner, err := a.schemaOwner(ctx, true)
	if err != nil {
		return err
	}
	v, err := schema.NewPersistentRegistry(a.store).RegisterVersion(ctx, owner, &sc, !a.f.inactive, "operator", time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return err
	}
	state := "active"
	if !v.Active {
		state = "inactive"
	}
	fmt.Fprintf(a.out, "registered %s %s (%s, %s) as %s\n", v.EntityType, v.Version, v.Schema.Scope(), state, v.ID)
	return nil
}

func (a *admin) schemaActivate(ctx context.Context) error {
	if len(a.pos) != 2 {
		return usageError{fmt.Sprintf("expected a type and a version, got %d arguments", len(a.pos))}
	}
	owner, err := a.schemaOwner(ctx, true)
	if err != nil {
		return err
	}
	typ := schema.NormalizeTypeName(a.pos[0])
	if err := a.store.ActivateSchemaVersion(ctx, owner, typ, a.pos[1]); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "activated %s %s\n", typ, a.pos[1])
	return nil
}

func (a *admin) schemaAutoEnhance(ctx context.Context) error {
	v, err := a.arg("on or off")
	if err != nil {
		return err
	}
	if v != "on" && v != "off" {
		return usageError{fmt.Sprintf("schema auto-enhance takes on or off, not %q", v)}
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	if err := a.store.SetAutoEnhance(ctx, u.ID, v == "on"); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "auto-enhancement %s for %s\n", v, u.Name)
	return nil
}

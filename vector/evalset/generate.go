package evalset

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Generate builds the set from the material in facts.go. It is
// deterministic: the committed testdata/conversations.json is its output
// (TestCommittedSetIsGenerated checks, `-update` rewrites it).
func Generate() Set {
	var set Set
	for i, p := range people {
		set.Conversations = append(set.Conversations, conversation(i, p))
	}
	return set
}

// unit is a turn of content the person says, with what the friend answers.
type unit struct {
	key, text, reply string
	// after is the key of a unit that must come in an earlier session.
	after string
}

// sessions is how many sessions each conversation has.
const sessions = 10

func conversation(i int, p person) Conversation {
	rng := rand.New(rand.NewPCG(uint64(i)+1, 0x636169726e))
	fill := func(s string, a, b, c slot) string {
		r := strings.NewReplacer("{P}", p.name, "{he}", p.he, "{his}", p.his, "{him}", p.him,
			"{a}", a[i], "{b}", b[i], "{c}", c[i],
			"{instrument}", slotOf("instrument")[i], "{sport}", slotOf("sport")[i])
		return r.Replace(s)
	}
	pick := func(list []string) string { return list[i%len(list)] }
	pickOther := func(list []string) string { return list[(i+1)%len(list)] }

	// Units: events in a shuffled order of their own, the rest shuffled,
	// then merged so that events spread over the sessions.
	var events, others []unit
	for _, f := range facts {
		u := unit{key: f.key, text: capital(fill(pick(f.say), f.a, f.b, f.c))}
		if len(f.reply) > 0 {
			u.reply = capital(fill(pick(f.reply), f.a, f.b, f.c))
		}
		if f.event {
			events = append(events, u)
		} else {
			others = append(others, u)
		}
	}
	for _, h := range hops {
		others = append(others,
			unit{key: h.key + "/1", text: capital(fill(pick(h.first), h.a, h.b, slot{}))},
			unit{key: h.key + "/2", text: capital(fill(pick(h.other), h.a, h.b, slot{})), after: h.key + "/1"})
	}
	for _, o := range opens {
		others = append(others, unit{key: "open/" + o.key, text: capital(fill(pick(o.say), o.a, slot{}, slot{}))})
	}
	rng.Shuffle(len(events), func(a, b int) { events[a], events[b] = events[b], events[a] })
	rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
	// A second half of a hop placed before its first swaps with it.
	pos := map[string]int{}
	for j, u := range others {
		pos[u.key] = j
	}
	for j, u := range others {
		if u.after != "" && pos[u.after] > j {
			k := pos[u.after]
			others[j], others[k] = others[k], others[j]
			pos[others[j].key], pos[others[k].key] = j, k
		}
	}
	// Each session gets an equal share of both lists, in order.
	perSession := make([][]unit, sessions)
	for j, u := range events {
		s := j * sessions / len(events)
		perSession[s] = append(perSession[s], u)
	}
	for j, u := range others {
		s := j * sessions / len(others)
		perSession[s] = append(perSession[s], u)
	}

	c := Conversation{ID: strings.ToLower(p.name), Speaker: p.name, Friend: p.friend}
	turnOf := map[string]string{} // unit key → turn id
	start := time.Date(2025, time.January, 6+3*i, 19, 0, 0, 0, time.UTC)
	add := func(session int, at time.Time, speaker, text string) string {
		id := fmt.Sprintf("%s-%04d", c.ID, len(c.Turns)+1)
		c.Turns = append(c.Turns, Turn{ID: id, Session: session + 1, Speaker: speaker, At: at, Text: text})
		return id
	}
	for s, units := range perSession {
		at := start.AddDate(0, 0, s*17+rng.IntN(6)).Add(time.Duration(rng.IntN(180)) * time.Minute)
		tick := func() time.Time {
			at = at.Add(time.Duration(1+rng.IntN(4)) * time.Minute)
			return at
		}
		speakers := [2]string{p.name, p.friend}
		opener := rng.IntN(2)
		add(s, tick(), speakers[opener], chatter[rng.IntN(len(chatter))])
		add(s, tick(), speakers[1-opener], chatter[rng.IntN(len(chatter))])
		// Order within a session: the units in their order, a hop's
		// second half only after its first (kept by the swap above when
		// both fall in the same session).
		for _, u := range units {
			for range rng.IntN(3) + 1 {
				add(s, tick(), speakers[rng.IntN(2)], chatter[rng.IntN(len(chatter))])
			}
			turnOf[u.key] = add(s, tick(), p.name, u.text)
			reply := u.reply
			if reply == "" {
				reply = reactions[rng.IntN(len(reactions))]
			}
			add(s, tick(), p.friend, reply)
		}
		add(s, tick(), speakers[rng.IntN(2)], chatter[rng.IntN(len(chatter))])
	}

	q := func(kind Kind, text string, answers ...string) {
		c.Questions = append(c.Questions, Question{ID: fmt.Sprintf("%s-q%03d", c.ID, len(c.Questions)+1), Kind: kind, Text: capital(text), Answers: answers})
	}
	for _, f := range facts {
		q(SingleFact, fill(pick(f.ask), f.a, f.b, f.c), turnOf[f.key])
	}
	for _, h := range hops {
		q(MultiHop, fill(pick(h.ask), h.a, h.b, slot{}), turnOf[h.key+"/1"], turnOf[h.key+"/2"])
	}
	byKey := map[string]fact{}
	for _, f := range facts {
		byKey[f.key] = f
	}
	for j, u := range events {
		f := byKey[u.key]
		q(Temporal, fill(pick(f.when), f.a, f.b, f.c), turnOf[u.key])
		if j > 0 {
			prev := byKey[events[j-1].key]
			q(Temporal, fill(pickOther(afterWordings), slot{}, slot{}, slot{})+fill(prev.done, prev.a, prev.b, prev.c)+"?", turnOf[u.key])
		}
	}
	for _, o := range opens {
		q(OpenDomain, fill(pick(o.ask), o.a, slot{}, slot{}), turnOf["open/"+o.key])
	}
	return c
}

// afterWordings open a question about what came after an event.
var afterWordings = []string{
	"What did {P} do after ",
	"What happened next in {P}'s life after ",
	"What was the next thing {P} told {his} friend about, following ",
}

// slotOf returns the first slot of the fact with this key.
func slotOf(key string) slot {
	for _, f := range facts {
		if f.key == key {
			return f.a
		}
	}
	panic("evalset: no fact " + key)
}

// capital returns s with its first letter upper-case.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

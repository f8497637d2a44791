package interpret

import (
	"strings"
	"time"
)

// interpretICS reads an iCalendar file (RFC 5545): each VEVENT becomes an
// event entity (title, start, end, location, description, organizer,
// attendees, uid), dated by its start, with the lines it spans. Where the
// schema registry does not know an "event" type (Set.HasType), each event
// is a note titled with its summary and date, whose created_date is the
// start: still on the timeline, and searchable.
func interpretICS(d Document, hasType func(string) bool) (Result, error) {
	lines := contentLines(d.Data)
	if len(lines) == 0 || lines[0].name != "BEGIN" || !strings.EqualFold(lines[0].value, "VCALENDAR") {
		return Result{}, unreadable("ics: no BEGIN:VCALENDAR")
	}
	asEvents := hasType != nil && hasType("event")
	r := Result{Interpreter: "ics", EntityType: "note"}
	if asEvents {
		r.EntityType = "event"
	}
	var text strings.Builder
	var ev map[string]any
	var start int64
	var attendees []any
	for _, cl := range lines {
		switch {
		case cl.name == "BEGIN" && strings.EqualFold(cl.value, "VEVENT"):
			ev, start, attendees = map[string]any{}, cl.first, nil
		case cl.name == "END" && strings.EqualFold(cl.value, "VEVENT") && ev != nil:
			if len(attendees) > 0 {
				ev["attendees"] = attendees
			}
			rec := eventRecord(ev, asEvents)
			r.Records = append(r.Records, Record{Entity: rec, Range: Range{Unit: "line", Start: start, End: cl.last}})
			text.WriteString(eventText(ev))
			ev = nil
		case ev != nil:
			v := unescapeText(cl.value)
			switch cl.name {
			case "SUMMARY":
				ev["title"] = v
			case "DESCRIPTION":
				ev["description"] = v
			case "LOCATION":
				ev["location"] = v
			case "UID":
				ev["uid"] = v
			case "STATUS":
				ev["status"] = strings.ToLower(v)
			case "DTSTART":
				if t, ok := icsTime(cl); ok {
					ev["start"] = t
				}
			case "DTEND":
				if t, ok := icsTime(cl); ok {
					ev["end"] = t
				}
			case "ORGANIZER":
				ev["organizer"] = mailAddr(cl)
			case "ATTENDEE":
				attendees = append(attendees, mailAddr(cl))
			case "RRULE":
				ev["recurrence"] = v
			}
		}
	}
	if len(r.Records) == 0 {
		r.Skipped = "the calendar holds no events"
	}
	r.Text, r.Title = text.String(), d.Filename
	return r, nil
}

func eventRecord(ev map[string]any, asEvents bool) map[string]any {
	title, _ := ev["title"].(string)
	if title == "" {
		title = "Untitled event"
	}
	if asEvents {
		e := map[string]any{"entity_type": "event"}
		for k, v := range ev {
			e[k] = v
		}
		e["title"] = title
		return e
	}
	n := map[string]any{"entity_type": "note", "tags": []any{"event"}}
	if s, ok := ev["start"].(string); ok {
		n["created_date"] = s
		title += " (" + s[:min(10, len(s))] + ")"
	}
	n["title"] = title
	n["content"] = strings.TrimSpace(eventText(ev))
	for k, v := range ev {
		if k != "title" {
			n["event_"+k] = v
		}
	}
	return n
}

func eventText(ev map[string]any) string {
	var b strings.Builder
	for _, k := range []string{"title", "start", "end", "location", "description"} {
		if v, ok := ev[k].(string); ok && v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// icsTime reads DATE and DATE-TIME values: UTC (Z), with a TZID, or floating.
func icsTime(cl contentLine) (string, bool) {
	v := strings.TrimSpace(cl.value)
	if cl.params["VALUE"] == "DATE" || len(v) == 8 {
		t, err := time.Parse("20060102", v)
		return t.Format("2006-01-02"), err == nil
	}
	loc := time.UTC
	if tz := cl.params["TZID"]; tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			loc = l
		}
	}
	t, err := time.ParseInLocation("20060102T150405", strings.TrimSuffix(v, "Z"), loc)
	if err != nil {
		return "", false
	}
	return t.UTC().Format(time.RFC3339), true
}

// mailAddr is an ORGANIZER or ATTENDEE: "Name <address>" or the address.
func mailAddr(cl contentLine) string {
	addr := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(cl.value), "mailto:"), "MAILTO:")
	if cn := cl.params["CN"]; cn != "" {
		return cn + " <" + addr + ">"
	}
	return addr
}

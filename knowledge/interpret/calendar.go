package interpret

import (
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// interpretICS reads an iCalendar file (RFC 5545): each VEVENT becomes an
// event entity (title, start, end, location, description, organizer,
// attendees, uid, status, recurrence), with the lines it spans. Where the
// user's data has no "event" type yet, the store creates the user's own
// from EventSchema, whose start and end yield timeline events (EventStart,
// EventEnd); a type the user or the operator registered is used as it is.
func interpretICS(d Document) (Result, error) {
	lines := newContentLineReader(d.Data)
	first, ok := lines.next()
	if lines.err != nil {
		return Result{}, lines.err
	}
	if !ok || first.name != "BEGIN" || !strings.EqualFold(first.value, "VCALENDAR") {
		return Result{}, unreadable("ics: no BEGIN:VCALENDAR")
	}
	r := Result{Interpreter: "ics", EntityType: "event", Schema: EventSchema()}
	var text strings.Builder
	var ev map[string]any
	var start int64
	var attendees []any
	for cl, ok := lines.next(); ok; cl, ok = lines.next() {
		switch {
		case cl.name == "BEGIN" && strings.EqualFold(cl.value, "VEVENT"):
			ev, start, attendees = map[string]any{}, cl.first, nil
		case cl.name == "END" && strings.EqualFold(cl.value, "VEVENT") && ev != nil:
			if len(attendees) > 0 {
				ev["attendees"] = attendees
			}
			if len(r.Records) == maxRecords {
				return Result{}, tooComplex(limitRecords, "ics: more than %d events", maxRecords)
			}
			rec := eventRecord(ev)
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
	if lines.err != nil {
		return Result{}, lines.err
	}
	if len(r.Records) == 0 {
		r.Skipped = "the calendar holds no events"
	}
	r.Text, r.Title = text.String(), d.Filename
	return r, nil
}

func eventRecord(ev map[string]any) map[string]any {
	e := map[string]any{"entity_type": "event"}
	for k, v := range ev {
		e[k] = v
	}
	if title, _ := ev["title"].(string); title == "" {
		e["title"] = "Untitled event"
	}
	return e
}

// EventSchema is the schema an iCalendar file's events get where the
// user's data has no "event" type: identified by their UID (an event
// without one by its content), named by their title, dated by their start
// and end.
func EventSchema() *schema.Schema {
	str := func(desc string) schema.Field {
		return schema.Field{Type: schema.TypeString, Description: desc}
	}
	return &schema.Schema{
		EntityType:  "event",
		Description: "Calendar events (created by the first iCalendar file interpreted; its fields evolve from the data).",
		Fields: map[string]schema.Field{
			"uid":         {Type: schema.TypeString, Identifier: true, Description: "The event's iCalendar UID."},
			"title":       str("The event's summary."),
			"start":       {Type: schema.TypeDate, EventType: "EventStart", Description: "When the event starts (a date, or a UTC time)."},
			"end":         {Type: schema.TypeDate, EventType: "EventEnd", Description: "When the event ends."},
			"location":    str("Where the event takes place."),
			"description": str("The event's description."),
			"organizer":   str("Who organises it: \"Name <address>\" or the address."),
			"attendees":   {Type: schema.TypeArray, Description: "Who attends: \"Name <address>\" or addresses."},
			"status":      str("confirmed, tentative or cancelled."),
			"recurrence":  str("The iCalendar RRULE of a recurring event."),
		},
		IdentityFields: []string{"uid"},
		NameFields:     []string{"title"},
	}
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

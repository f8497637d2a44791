package interpret

import (
	"strings"
)

// interpretVCard reads a vCard file (RFC 6350, and 2.1/3.0 as exported by
// phones and mail clients): each card becomes a contact with its name,
// first e-mail, first phone, organisation and address; further e-mails and
// phones, the title, birthday and note are kept as fields the schema does
// not name (raw fragments).
func interpretVCard(d Document) (Result, error) {
	r := Result{Interpreter: "vcard", EntityType: "contact"}
	var card map[string]any
	var start int64
	var text strings.Builder
	lines := newContentLineReader(d.Data)
	for cl, ok := lines.next(); ok; cl, ok = lines.next() {
		v := unescapeText(cl.value)
		switch {
		case cl.name == "BEGIN" && strings.EqualFold(cl.value, "VCARD"):
			card, start = map[string]any{"entity_type": "contact"}, cl.first
		case cl.name == "END" && strings.EqualFold(cl.value, "VCARD") && card != nil:
			if _, ok := card["name"]; !ok {
				if e, ok := card["email"].(string); ok {
					card["name"] = e
				} else {
					card = nil
					continue
				}
			}
			if len(r.Records) == maxRecords {
				return Result{}, tooComplex(limitRecords, "vcard: more than %d cards", maxRecords)
			}
			r.Records = append(r.Records, Record{Entity: card, Range: Range{Unit: "line", Start: start, End: cl.last}})
			text.WriteString(card["name"].(string) + "\n")
			card = nil
		case card == nil || v == "":
		case cl.name == "FN":
			card["name"] = v
		case cl.name == "N":
			if _, ok := card["name"]; !ok {
				parts := strings.Split(cl.value, ";")
				if len(parts) > 1 {
					card["name"] = strings.TrimSpace(unescapeText(parts[1]) + " " + unescapeText(parts[0]))
				}
			}
		case cl.name == "EMAIL":
			addAlt(card, "email", v)
		case cl.name == "TEL":
			addAlt(card, "phone", strings.TrimPrefix(v, "tel:"))
		case cl.name == "ORG":
			card["company"] = strings.Trim(strings.ReplaceAll(v, ";", ", "), ", ")
		case cl.name == "ADR":
			card["address"] = strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ';' }), ", ")
		case cl.name == "TITLE":
			card["title"] = v
		case cl.name == "BDAY":
			if iso, ok := parseDate(v); ok {
				card["birth_date"] = iso
			} else if len(v) == 8 {
				card["birth_date"] = v[:4] + "-" + v[4:6] + "-" + v[6:]
			}
		case cl.name == "NOTE":
			card["note"] = v
		case cl.name == "URL":
			card["url"] = v
		case cl.name == "CATEGORIES":
			var labels []any
			for _, l := range strings.Split(v, ",") {
				labels = append(labels, strings.TrimSpace(l))
			}
			card["labels"] = labels
		}
	}
	if lines.err != nil {
		return Result{}, lines.err
	}
	if len(r.Records) == 0 {
		return Result{}, unreadable("vcard: no BEGIN:VCARD … END:VCARD")
	}
	r.Text, r.Title = text.String(), d.Filename
	return r, nil
}

// addAlt sets field to v, or appends v to other_<field>s when it is set.
func addAlt(card map[string]any, field, v string) {
	if _, ok := card[field]; !ok {
		card[field] = v
		return
	}
	other, _ := card["other_"+field+"s"].([]any)
	card["other_"+field+"s"] = append(other, v)
}

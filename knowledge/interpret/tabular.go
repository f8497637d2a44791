package interpret

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkg/cairn/knowledge/schema"
)

// A table (CSV rows, or a JSON array of objects) becomes one entity per
// row. The type is chosen from the columns (an amount and a date make
// transactions, an invoice number invoices, a name with an e-mail or phone
// contacts), each column is mapped onto a field of that type by its
// normalised name and known synonyms, and the other columns are kept as
// they are: the store pipeline keeps them as raw fragments. A table whose
// columns name none of those types is of a type named after the file
// (recipes.csv: recipe rows are "recipes" entities), each column kept
// under its normalised name; the store creates the user's schema for it
// where there is none, and the schema evolves from the columns.

// synonyms maps normalised column names onto fields, per entity type.
var synonyms = map[string]map[string][]string{
	"transaction": {
		"transaction_id": {"transaction_id", "id", "txn_id", "reference", "ref", "transaction_reference"},
		"date":           {"date", "posted", "posting_date", "booking_date", "transaction_date", "value_date", "posted_date"},
		"amount":         {"amount", "value", "sum", "total"},
		"currency":       {"currency", "ccy", "currency_code"},
		"description":    {"description", "memo", "details", "narrative", "text", "statement_text"},
		"merchant":       {"merchant", "payee", "counterparty", "vendor", "name"},
		"category":       {"category", "type"},
		"account":        {"account", "account_name", "account_number", "iban"},
	},
	"invoice": {
		"invoice_number": {"invoice_number", "invoice_no", "invoice", "invoice_id", "number"},
		"vendor_name":    {"vendor_name", "vendor", "supplier", "from", "issuer"},
		"customer_name":  {"customer_name", "customer", "client", "bill_to"},
		"amount":         {"amount", "total", "amount_due", "total_amount"},
		"currency":       {"currency", "ccy"},
		"status":         {"status"},
		"issue_date":     {"issue_date", "date", "invoice_date", "issued"},
		"due_date":       {"due_date", "due"},
		"paid_date":      {"paid_date", "paid"},
		"notes":          {"notes", "note", "remarks"},
	},
	"contact": {
		"name":    {"name", "full_name", "display_name", "contact", "contact_name"},
		"email":   {"email", "e_mail", "email_address", "mail"},
		"phone":   {"phone", "telephone", "mobile", "phone_number", "tel"},
		"address": {"address", "postal_address", "street"},
		"company": {"company", "organization", "organisation", "org", "employer"},
	},
	"note": {
		"title":        {"title", "subject", "name", "heading"},
		"content":      {"content", "body", "text", "note", "description"},
		"created_date": {"created_date", "date", "created", "created_at"},
	},
}

// table is rows of named cells, with where each row came from.
type table struct {
	columns []string
	rows    [][]string
	ranges  []Range
}

func interpretCSV(d Document) (Result, error) {
	t, err := readCSV(d.Data)
	if err != nil {
		return Result{}, err
	}
	r := rowsToRecords(t, d)
	r.Interpreter = "csv"
	return r, nil
}

func readCSV(data []byte) (table, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	cr.Comma = sniffComma(data)
	if err := checkCSVShape(data, byte(cr.Comma)); err != nil {
		return table{}, err
	}
	header, err := cr.Read()
	if err != nil {
		return table{}, unreadable("csv: no header row: %v", err)
	}
	if len(header) > maxTableColumns {
		return table{}, tooComplex(limitColumns, "csv: %d columns, at most %d", len(header), maxTableColumns)
	}
	t := table{columns: header}
	cells := len(header)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return table{}, unreadable("csv: %v", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) > maxTableColumns {
			line, _ := cr.FieldPos(0)
			return table{}, tooComplex(limitColumns, "csv: line %d: %d cells, at most %d columns", line, len(rec), maxTableColumns)
		}
		if cells += len(rec); cells > maxTableCells {
			return table{}, tooComplex(limitCells, "csv: more than %d cells", maxTableCells)
		}
		if len(t.rows) == maxRecords {
			return table{}, tooComplex(limitRecords, "csv: more than %d rows", maxRecords)
		}
		start, _ := cr.FieldPos(0)
		end, _ := cr.FieldPos(len(rec) - 1)
		t.rows = append(t.rows, rec)
		t.ranges = append(t.ranges, Range{Unit: "line", Start: int64(start), End: int64(end)})
	}
	return t, nil
}

// checkCSVShape refuses a CSV with a record of more than maxTableColumns
// fields, or more than maxTableCells fields in all, before the CSV reader
// allocates them: one pass over the bytes counts the delimiters outside
// quotes (a doubled quote inside a quoted field toggles twice), a record
// ending at a line break outside quotes. Empty lines, which the reader
// skips, count for nothing. A malformed file may be counted short; the
// reader refuses it.
func checkCSVShape(data []byte, comma byte) error {
	quoted, fields, cells, line, empty := false, 1, 0, 1, true
	for _, b := range data {
		switch {
		case b == '"':
			quoted, empty = !quoted, false
		case quoted:
			if b == '\n' {
				line++
			}
		case b == comma:
			if fields, empty = fields+1, false; fields > maxTableColumns {
				return tooComplex(limitColumns, "csv: line %d: more than %d columns", line, maxTableColumns)
			}
		case b == '\n':
			if !empty {
				if cells += fields; cells > maxTableCells {
					return tooComplex(limitCells, "csv: more than %d cells", maxTableCells)
				}
			}
			fields, empty = 1, true
			line++
		case b != '\r':
			empty = false
		}
	}
	return nil
}

// sniffComma picks the delimiter the header line uses most: comma,
// semicolon (European exports) or tab.
func sniffComma(data []byte) rune {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i]
	}
	best, n := ',', bytes.Count(line, []byte(","))
	for _, c := range []rune{';', '\t'} {
		if k := bytes.Count(line, []byte(string(c))); k > n {
			best, n = c, k
		}
	}
	return best
}

func interpretJSON(d Document) (Result, error) {
	dec := json.NewDecoder(bytes.NewReader(d.Data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Result{}, unreadable("json: %v", err)
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		// {"transactions": [...]} or one object.
		for _, k := range sortedKeys(x) {
			if arr, ok := x[k].([]any); ok && len(arr) > 0 && isObjects(arr) {
				items = arr
				break
			}
		}
		if items == nil {
			items = []any{x}
		}
	default:
		return Result{}, unreadable("json: expected an object or an array of objects")
	}
	if len(items) > maxRecords {
		return Result{}, tooComplex(limitRecords, "json: %d objects, at most %d", len(items), maxRecords)
	}
	var objs []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			objs = append(objs, m)
		}
	}
	if len(objs) == 0 {
		return Result{Interpreter: "json", Skipped: "the JSON holds no objects"}, nil
	}
	// Objects that name their own entity_type are taken as they are.
	if _, ok := objs[0]["entity_type"].(string); ok {
		r := Result{Interpreter: "json"}
		for i, o := range objs {
			r.Records = append(r.Records, Record{Entity: o, Range: Range{Unit: "item", Start: int64(i), End: int64(i)}})
		}
		return r, nil
	}
	var cols []string
	known := map[string]bool{}
	for _, o := range objs {
		if len(o) > maxTableColumns {
			return Result{}, tooComplex(limitColumns, "json: an object of %d keys, at most %d columns", len(o), maxTableColumns)
		}
		for _, k := range sortedKeys(o) {
			if !known[k] {
				known[k] = true
				cols = append(cols, k)
			}
		}
		if len(cols) > maxTableColumns {
			return Result{}, tooComplex(limitColumns, "json: more than %d distinct keys", maxTableColumns)
		}
	}
	if len(objs)*len(cols) > maxTableCells {
		return Result{}, tooComplex(limitCells, "json: %d objects of %d columns, at most %d cells", len(objs), len(cols), maxTableCells)
	}
	t := table{columns: cols}
	for i, o := range objs {
		row := make([]string, len(cols))
		for j, c := range cols {
			switch x := o[c].(type) {
			case nil:
			case string:
				row[j] = x
			case json.Number:
				row[j] = x.String()
			default:
				b, _ := json.Marshal(x)
				row[j] = string(b)
			}
		}
		t.rows = append(t.rows, row)
		t.ranges = append(t.ranges, Range{Unit: "item", Start: int64(i), End: int64(i)})
	}
	r := rowsToRecords(t, d)
	r.Interpreter = "json"
	return r, nil
}

func isObjects(arr []any) bool {
	for _, a := range arr {
		if _, ok := a.(map[string]any); !ok {
			return false
		}
	}
	return true
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// normalizeColumn turns "Posting Date" into "posting_date".
func normalizeColumn(c string) string {
	return strings.Trim(nonWord.ReplaceAllString(strings.ToLower(strings.TrimSpace(c)), "_"), "_")
}

// chooseType picks the entity type a table's columns describe.
func chooseType(cols []string) string {
	has := func(typ, field string) bool {
		for _, c := range cols {
			if slices.Contains(synonyms[typ][field], c) {
				return true
			}
		}
		return false
	}
	switch {
	case has("invoice", "invoice_number") && slices.ContainsFunc(cols, func(c string) bool { return strings.Contains(c, "invoice") }):
		return "invoice"
	case has("transaction", "amount") && has("transaction", "date"):
		return "transaction"
	case has("contact", "name") && (has("contact", "email") || has("contact", "phone")):
		return "contact"
	}
	return ""
}

// tableType names the type of a table whose columns name no known type
// after its file: the name without its extension, normalised as a column
// is, and made a valid type name by the schema registry's rules (one that
// starts with a digit or is one of Cairn's own node names is prefixed
// with "table_"). A file with no usable name gives notes, as before types
// could be created.
func tableType(filename string) string {
	base := filepath.Base(strings.ReplaceAll(filename, "\\", "/"))
	name := normalizeColumn(strings.TrimSuffix(base, filepath.Ext(base)))
	if name == "" || name == "." {
		return "note"
	}
	for _, t := range []string{name, "table_" + name} {
		t = strings.TrimRight(clip(t, 63), "_")
		if schema.ValidateTypeName("entity_type", schema.NormalizeTypeName(t)) == nil {
			return t
		}
	}
	return "note"
}

// mapColumns maps each column onto a field of typ, each field taken at
// most once, the first synonym listed winning; unmapped columns keep their
// normalised name.
func mapColumns(typ string, cols []string) []string {
	out := make([]string, len(cols))
	taken := map[string]bool{}
	fields := sortedKeys(synonyms[typ])
	// Rank: for each field, its synonyms in order; a column is mapped to
	// the field whose synonym list names it earliest.
	for rank := 0; rank < 8; rank++ {
		for _, f := range fields {
			syn := synonyms[typ][f]
			if taken[f] || rank >= len(syn) {
				continue
			}
			for i, c := range cols {
				if out[i] == "" && c == syn[rank] {
					out[i], taken[f] = f, true
					break
				}
			}
		}
	}
	for i, c := range cols {
		if out[i] == "" {
			out[i] = c
			if c == "" || c == "entity_type" {
				out[i] = fmt.Sprintf("column_%d", i+1)
			}
		}
	}
	return out
}

func rowsToRecords(t table, d Document) Result {
	cols := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = normalizeColumn(c)
	}
	typ := chooseType(cols)
	if typ == "" {
		typ = tableType(d.Filename)
	}
	_, known := synonyms[typ]
	fields := mapColumns(typ, cols)
	r := Result{EntityType: typ, Mapping: map[string]string{}}
	for i, c := range t.columns {
		r.Mapping[c] = fields[i]
	}
	seen := map[string]int{}
	var text strings.Builder
	for i, row := range t.rows {
		e := map[string]any{"entity_type": typ}
		for j, cell := range row {
			if j >= len(fields) {
				break
			}
			cell = strings.TrimSpace(cell)
			if cell == "" {
				continue
			}
			if known {
				e[fields[j]] = convertCell(typ, fields[j], cell)
			} else {
				e[fields[j]] = cell // a type of the file's own: its cells as they are
			}
		}
		if known {
			fillIdentity(typ, e, row, seen, d.Filename, i)
		}
		r.Records = append(r.Records, Record{Entity: e, Range: t.ranges[i]})
		if text.Len() < 64<<10 {
			text.WriteString(strings.Join(row, " "))
			text.WriteByte('\n')
		}
	}
	r.Text = text.String()
	r.Title = d.Filename
	return r
}

// convertCell turns a cell into the field's type: amounts into numbers,
// dates into ISO 8601. A cell that does not parse is kept as text (the
// store pipeline refuses a wrong type, so a number field gets a number or
// nothing: the text goes under the column's own name instead).
func convertCell(typ, field, cell string) any {
	switch field {
	case "amount", "value", "employees":
		if n, ok := parseAmount(cell); ok {
			return n
		}
	case "date", "issue_date", "due_date", "paid_date", "created_date":
		if iso, ok := parseDate(cell); ok {
			return iso
		}
	}
	return cell
}

// fillIdentity makes sure a row has the fields its type's identity needs,
// deterministically: a transaction without an id gets one hashed from its
// cells (the n-th identical row of a file gets its own), a note without a
// title is named after the file and row.
func fillIdentity(typ string, e map[string]any, row []string, seen map[string]int, filename string, i int) {
	// Drop cells that did not convert to the field's type.
	for _, f := range []string{"amount", "value"} {
		if s, ok := e[f].(string); ok {
			delete(e, f)
			e[f+"_text"] = s
		}
	}
	for _, f := range []string{"date", "issue_date", "due_date", "paid_date", "created_date"} {
		if s, ok := e[f].(string); ok {
			if _, isDate := parseDate(s); !isDate {
				delete(e, f)
				e[f+"_text"] = s
			}
		}
	}
	switch typ {
	case "transaction":
		if _, ok := e["transaction_id"]; !ok {
			key := strings.Join(row, "\x1f")
			seen[key]++
			h := sha256.Sum256([]byte(key + "\x1e" + strconv.Itoa(seen[key])))
			e["transaction_id"] = "row-" + hex.EncodeToString(h[:8])
		}
	case "invoice":
		if _, ok := e["invoice_number"]; !ok {
			e["invoice_number"] = fmt.Sprintf("%s row %d", filename, i+1)
		}
	case "contact":
		if _, ok := e["name"]; !ok {
			if em, ok := e["email"].(string); ok {
				e["name"] = em
			}
		}
	case "note":
		if _, ok := e["title"]; !ok {
			e["title"] = fmt.Sprintf("%s row %d", filename, i+1)
		}
	}
}

var amountJunk = regexp.MustCompile(`[^0-9.,\-+()]`)

// parseAmount reads "1,234.56", "-12.00", "(12.00)", "€ 12,50".
func parseAmount(s string) (float64, bool) {
	s = amountJunk.ReplaceAllString(strings.TrimSpace(s), "")
	neg := strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")")
	s = strings.Trim(s, "()")
	if s == "" {
		return 0, false
	}
	lastDot, lastComma := strings.LastIndex(s, "."), strings.LastIndex(s, ",")
	switch {
	case lastComma > lastDot && len(s)-lastComma-1 != 3 || (lastComma > lastDot && lastDot >= 0):
		// Decimal comma: "12,50", "1.234,56".
		s = strings.ReplaceAll(s, ".", "")
		s = strings.Replace(s, ",", ".", 1)
	default:
		s = strings.ReplaceAll(s, ",", "")
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

var dateLayouts = []string{
	"2006-01-02", time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006/01/02",
	"02.01.2006", "01/02/2006", "1/2/2006", "2 Jan 2006", "02 Jan 2006", "Jan 2, 2006", "January 2, 2006",
}

// parseDate reads the common date layouts into ISO 8601 (a date, or an
// RFC 3339 time when the cell has one). 01/02/2006 is read month first.
func parseDate(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if strings.Contains(l, "15") {
			return t.UTC().Format(time.RFC3339), true
		}
		return t.Format("2006-01-02"), true
	}
	return "", false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

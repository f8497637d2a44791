package interpret

import (
	"regexp"
	"strings"
)

// Invoices in free text (a PDF or DOCX invoice, an e-mailed one) are read
// by labels, without a model: an invoice number, a total, dates, the
// currency, the vendor (a "From" line, or the first line of the text) and
// the customer ("Bill to"). A text that does not name an invoice number is
// not an invoice.
var (
	invNumber   = regexp.MustCompile(`(?im)invoice\s*(?:no\.?|number|num\.?|#|id)\s*[:#]?\s*([A-Z0-9][A-Z0-9\-/.]*)`)
	invTotal    = regexp.MustCompile(`(?im)^\s*(?:grand\s+)?(?:total(?:\s+due)?|amount\s+due|balance\s+due|total\s+amount)\s*:?\s*([A-Z]{3}|[$€£])?\s*(-?[\d][\d.,' ]*\d|\d)\s*([A-Z]{3}|[$€£])?`)
	invDate     = regexp.MustCompile(`(?im)^\s*(?:invoice\s+)?date(?:\s+of\s+issue)?\s*:?\s*(.+?)\s*$`)
	invDue      = regexp.MustCompile(`(?im)^\s*(?:payment\s+)?due(?:\s+date)?\s*:?\s*(.+?)\s*$`)
	invVendor   = regexp.MustCompile(`(?im)^\s*(?:from|vendor|seller|supplier)\s*:\s*(.+?)\s*$`)
	invCustomer = regexp.MustCompile(`(?im)^\s*(?:bill(?:ed)?\s+to|customer|client)\s*:\s*(.+?)\s*$`)
)

var currencySymbols = map[string]string{"$": "USD", "€": "EUR", "£": "GBP"}

// textInvoice returns the invoice a text describes, or nil.
func textInvoice(text string) map[string]any {
	m := invNumber.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	inv := map[string]any{"entity_type": "invoice", "invoice_number": strings.TrimRight(m[1], ".")}
	if t := invTotal.FindStringSubmatch(text); t != nil {
		if n, ok := parseAmount(t[2]); ok {
			inv["amount"] = n
		}
		for _, c := range []string{t[1], t[3]} {
			if c == "" {
				continue
			}
			if code, ok := currencySymbols[c]; ok {
				c = code
			}
			inv["currency"] = c
		}
	}
	if d := invDate.FindStringSubmatch(text); d != nil {
		if iso, ok := parseDate(d[1]); ok {
			inv["issue_date"] = iso
		}
	}
	if d := invDue.FindStringSubmatch(text); d != nil {
		if iso, ok := parseDate(d[1]); ok {
			inv["due_date"] = iso
		}
	}
	if v := invVendor.FindStringSubmatch(text); v != nil {
		inv["vendor_name"] = v[1]
	} else {
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !invNumber.MatchString(line) && !strings.EqualFold(line, "invoice") {
				inv["vendor_name"] = clip(line, 200)
				break
			}
		}
	}
	if c := invCustomer.FindStringSubmatch(text); c != nil {
		inv["customer_name"] = c[1]
	}
	return inv
}

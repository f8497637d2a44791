package schema

// builtinSchemas returns the entity types Cairn knows out of the box: the
// Neotoma MVP types. Each names the fields that give an entity its identity,
// the field its canonical name comes from, per-field merge policies, and the
// date fields that yield timeline events.
func builtinSchemas() []*Schema {
	str := func(desc string) Field { return Field{Type: TypeString, Description: desc} }
	num := func(desc string) Field { return Field{Type: TypeNumber, Description: desc, Policy: HighestPriority} }
	date := func(desc, event string) Field { return Field{Type: TypeDate, Description: desc, EventType: event} }
	list := func(desc string) Field { return Field{Type: TypeArray, Description: desc, Policy: MergeArray} }
	ident := func(f Field) Field { f.Identifier = true; return f }
	req := func(f Field) Field { f.Required = true; return f }
	specific := func(f Field) Field { f.Policy = MostSpecific; return f }
	prio := func(f Field) Field { f.Policy = HighestPriority; return f }

	return []*Schema{
		{
			EntityType:  "invoice",
			Version:     "1.0",
			Description: "A bill that a vendor issues to a customer for goods or services, with an amount due and payment dates.",
			Fields: map[string]Field{
				"invoice_number": req(ident(str("The vendor's invoice number."))),
				"vendor_name":    ident(str("Who issued the invoice.")),
				"customer_name":  str("Who is billed."),
				"amount":         num("Total amount due."),
				"currency":       str("ISO 4217 currency code, e.g. EUR."),
				"status":         prio(str("draft, sent, paid, overdue or void.")),
				"issue_date":     date("When the invoice was issued.", "InvoiceIssued"),
				"due_date":       date("When payment is due.", "InvoiceDue"),
				"paid_date":      date("When it was paid.", "InvoicePaid"),
				"line_items":     list("The billed items."),
				"notes":          specific(str("Free-text remarks.")),
			},
			IdentityFields: []string{"vendor_name", "invoice_number"},
			NameFields:     []string{"invoice_number"},
		},
		{
			EntityType:  "transaction",
			Version:     "1.0",
			Description: "A movement of money on an account: a payment, a transfer, a card charge or a deposit.",
			Fields: map[string]Field{
				"transaction_id": ident(str("The bank's or provider's transaction id.")),
				"date":           date("When the transaction was posted.", "TransactionPosted"),
				"amount":         num("Signed amount; negative for money out."),
				"currency":       str("ISO 4217 currency code."),
				"description":    specific(str("The statement text.")),
				"merchant":       ident(str("Counterparty or merchant name.")),
				"category":       prio(str("Spending category.")),
				"account":        str("The account it was posted on."),
			},
			IdentityFields: []string{"transaction_id"},
			NameFields:     []string{"description", "merchant", "transaction_id"},
		},
		{
			EntityType:  "receipt",
			Version:     "1.0",
			Description: "Proof of a purchase from a merchant: what was bought, for how much, when and how it was paid.",
			Fields: map[string]Field{
				"receipt_number": ident(str("The merchant's receipt number.")),
				"merchant":       ident(str("Where the purchase was made.")),
				"amount":         num("Total paid."),
				"currency":       str("ISO 4217 currency code."),
				"date":           date("When the purchase was made.", "PurchaseMade"),
				"payment_method": str("Card, cash, transfer…"),
				"items":          list("The purchased items."),
			},
			IdentityFields: []string{"merchant", "receipt_number"},
			NameFields:     []string{"merchant", "receipt_number"},
		},
		{
			EntityType:  "contract",
			Version:     "1.0",
			Description: "A binding agreement between parties, with its term, value and signature dates.",
			Fields: map[string]Field{
				"title":           req(ident(str("The contract's title."))),
				"contract_number": ident(str("Reference number.")),
				"counterparty":    ident(str("The other party.")),
				"parties":         list("Everyone bound by it."),
				"status":          prio(str("draft, active, expired or terminated.")),
				"value":           num("Total contract value."),
				"currency":        str("ISO 4217 currency code."),
				"signed_date":     date("When it was signed.", "ContractSigned"),
				"start_date":      date("When it takes effect.", "ContractStarted"),
				"end_date":        date("When it ends.", "ContractEnds"),
				"terms":           specific(str("Summary of the main terms.")),
			},
			IdentityFields: []string{"title", "counterparty"},
			NameFields:     []string{"title"},
		},
		{
			EntityType:  "note",
			Version:     "1.0",
			Description: "A free-text note, memo or piece of knowledge worth keeping.",
			Fields: map[string]Field{
				"title":        req(ident(str("A short title."))),
				"content":      specific(str("The note's text.")),
				"tags":         list("Labels for the note."),
				"created_date": date("When the note was written.", "NoteWritten"),
			},
			IdentityFields: []string{"title"},
			NameFields:     []string{"title"},
		},
		{
			EntityType:  "person",
			Version:     "1.0",
			Description: "A human being: someone the user knows, works with or mentions, with their contact details and role.",
			Fields: map[string]Field{
				"name":       req(ident(str("Full name."))),
				"email":      ident(str("Primary email address.")),
				"phone":      ident(str("Phone number.")),
				"company":    str("Where they work."),
				"title":      str("Job title or role."),
				"birth_date": date("Date of birth.", "Birthday"),
				"aliases":    list("Other names they go by."),
				"notes":      specific(str("What the user knows about them.")),
			},
			IdentityFields: []string{"name"},
			NameFields:     []string{"name"},
		},
		{
			EntityType:  "company",
			Version:     "1.0",
			Description: "An organisation: a business, vendor, customer, employer or institution.",
			Fields: map[string]Field{
				"name":         req(ident(str("Legal or common name."))),
				"domain":       ident(str("Main web domain.")),
				"tax_id":       ident(str("Tax or registration number.")),
				"industry":     str("What it does."),
				"address":      specific(str("Postal address.")),
				"employees":    num("Headcount."),
				"founded_date": date("When it was founded.", "CompanyFounded"),
				"aliases":      list("Other names it trades under."),
			},
			IdentityFields: []string{"name"},
			NameFields:     []string{"name"},
		},
		{
			EntityType:  "contact",
			Version:     "1.0",
			Description: "An address-book entry: how to reach a person or an organisation (email, phone, address).",
			Fields: map[string]Field{
				"name":    req(ident(str("Who the contact is."))),
				"email":   ident(str("Email address.")),
				"phone":   ident(str("Phone number.")),
				"address": specific(str("Postal address.")),
				"company": str("Organisation."),
				"labels":  list("Groups such as family or work."),
			},
			IdentityFields: []string{"name"},
			NameFields:     []string{"name"},
		},
		{
			EntityType:  "task",
			Version:     "1.0",
			Description: "A to-do or piece of work with a status, an owner and a due date.",
			Fields: map[string]Field{
				"title":          req(ident(str("What is to be done."))),
				"status":         prio(str("todo, in_progress, done or cancelled.")),
				"priority":       prio(str("low, medium or high.")),
				"assignee":       str("Who does it."),
				"description":    specific(str("Details.")),
				"due_date":       date("When it is due.", "TaskDue"),
				"completed_date": date("When it was done.", "TaskCompleted"),
				"tags":           list("Labels."),
			},
			IdentityFields: []string{"title"},
			NameFields:     []string{"title"},
		},
	}
}

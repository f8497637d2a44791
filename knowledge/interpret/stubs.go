package interpret

func interpretICS(d Document) (Result, error) {
	return Result{Interpreter: "ics", Skipped: "not yet"}, nil
}
func interpretVCard(d Document) (Result, error) {
	return Result{Interpreter: "vcard", Skipped: "not yet"}, nil
}
func interpretEmail(d Document) (Result, error) {
	return Result{Interpreter: "eml", Skipped: "not yet"}, nil
}
func pdfText(b []byte) (string, int, error) { return "", 0, unreadable("pdf not yet") }
func docxText(b []byte) (string, error)     { return "", unreadable("docx not yet") }

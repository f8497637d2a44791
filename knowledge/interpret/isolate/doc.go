// Package isolate runs the deterministic interpreters (interpret.Parse) in
// a child process that the service can kill, under limits of wall-clock
// time, memory and CPU.
//
// The files a user uploads are hostile input for third-party parsers: a
// 238-byte PDF whose page tree points at itself makes the PDF library loop
// forever, and a 73 KB PDF or DOCX can make a parser allocate gigabytes.
// Neither can be stopped from inside the process (a goroutine cannot be
// killed, and an allocation cannot be refused), so the parsers run in a
// worker process: a Runner starts it, writes the document on its stdin,
// reads the Result on its stdout, and kills its whole process group when
// the context ends or a limit is reached. A limit reached is a
// *interpret.TooComplexError naming it ("time", "memory", "cpu",
// "output"); trying the file again will not help.
//
// The worker is the service's own binary run with the argument
// interpret-worker (cmd/cairn), whose main calls ServeWorker. Tests
// re-execute their test binary instead (see Options.Command and
// WorkerEnv).
package isolate

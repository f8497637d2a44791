package transfer

// UnmarshalSnake is unmarshalSnake, for the tests of package transfer_test
// that rewrite an export in format version 1.
var UnmarshalSnake = unmarshalSnake

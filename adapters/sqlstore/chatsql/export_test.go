package chatsql

// FirstSchema is the chat schema's first version alone, to test the
// upgrade from it.
var FirstSchema = migrations[:1]

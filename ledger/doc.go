// Package ledger is the cycle record schema, as pure data: parsing (tolerant
// of legacy field names and of fields it does not know, which it keeps),
// validation, the canonical JSON Lines form stored in notes, the order in
// which records are listed, and the schema version of a ledger.
//
// It knows nothing of git: callers hand it bytes and get bytes back.
package ledger

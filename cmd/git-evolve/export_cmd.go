package main

type exportCmd struct {
	All bool `help:"Include the local journal (idle and unchanged cycles)."`
}

func (exportCmd) Help() string {
	return `Prints every record of the ledger as canonical JSON Lines (known fields in the
schema's order, then any other fields, sorted), in cycle order. Importing the
output into another repository with the same commits reproduces the ledger.`
}

func (c *exportCmd) Run(e *env) error {
	l, err := e.Ledger()
	if err != nil {
		return err
	}
	data, errs, err := l.Export(c.All)
	if err != nil {
		return err
	}
	if _, err := e.stdout.Write(data); err != nil {
		return err
	}
	return noteErrors(e, errs)
}

package migparted

import "fmt"

func sprint(v any) string { return fmt.Sprint(v) }

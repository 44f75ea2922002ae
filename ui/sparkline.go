package ui

import "github.com/wmcon/wmcon/ui/spark"

// sparkline draws values (oldest first) as width level characters, newest at the right (see spark.Line).
func sparkline(values []float64, width int, lo, hi float64, levels string) string {
	return spark.Line(values, width, lo, hi, levels)
}

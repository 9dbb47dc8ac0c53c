package govern

import "strconv"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// usd writes nano-USD as dollars with cents, more digits when it has them.
func usd(nanos int64) string {
	s := strconv.FormatFloat(float64(nanos)/NanosPerUSD, 'f', -1, 64)
	if f := float64(nanos) / NanosPerUSD; f == float64(int64(f)) {
		s = strconv.FormatFloat(f, 'f', 2, 64)
	}
	return s
}

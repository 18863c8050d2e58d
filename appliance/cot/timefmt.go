package cot

import "time"

// parseTime parses a CoT time (protocol.md §1): ISO-8601
// "2006-01-02T15:04:05" with 0 to 9 fractional digits and a "Z", a numeric
// offset ("+01:00" or "+0100") or no zone at all (taken as UTC). The result
// is in UTC.
func parseTime(b []byte) (time.Time, bool) {
	b = trimBlank(b)
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	if c := b[10]; c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	i := 19
	nsec := 0
	if i < len(b) && b[i] == '.' {
		i++
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if n == 9 {
				return time.Time{}, false
			}
			nsec = nsec*10 + int(b[i]-'0')
			n++
			i++
		}
		if n == 0 {
			return time.Time{}, false
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	offset := 0
	if i < len(b) {
		switch b[i] {
		case 'Z', 'z':
			i++
		case '+', '-':
			sign := 1
			if b[i] == '-' {
				sign = -1
			}
			rest := b[i+1:]
			var oh, om int
			var ok bool
			switch {
			case len(rest) == 5 && rest[2] == ':':
				oh, ok = digits(rest[0:2])
				if ok {
					om, ok = digits(rest[3:5])
				}
			case len(rest) == 4:
				oh, ok = digits(rest[0:2])
				if ok {
					om, ok = digits(rest[2:4])
				}
			case len(rest) == 2:
				oh, ok = digits(rest)
			}
			if !ok || oh > 23 || om > 59 {
				return time.Time{}, false
			}
			offset = sign * (oh*3600 + om*60)
			i = len(b)
		default:
			return time.Time{}, false
		}
	}
	if i != len(b) {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if offset != 0 {
		t = t.Add(-time.Duration(offset) * time.Second)
	}
	return t, true
}

func digits(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// TimeFormat is the one way Outpost writes a time, in CoT and in every
// document and JSON answer: ISO-8601 UTC with milliseconds (protocol.md §1:
// what ATAK writes).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeFormat.
func FormatTime(t time.Time) string { return string(appendTime(make([]byte, 0, len(TimeFormat)), t)) }

// appendTime appends t as UTC ISO-8601 with milliseconds,
// "2006-01-02T15:04:05.000Z" (protocol.md §1: what ATAK writes).
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	dst = append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
	return dst
}

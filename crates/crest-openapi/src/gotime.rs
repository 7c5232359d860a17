//! Go's `time.Parse` for the two layouts apimachinery's times use (`metav1.Time`: RFC 3339;
//! `metav1.MicroTime`: RFC 3339 with exactly six fractional digits), with Go's error texts
//! (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`), and the
//! UTC form Go's encoder writes them in again.

/// An instant: seconds since the Unix epoch and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Instant {
    secs: i64,
    nanos: u32,
}

const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

#[derive(Clone, Copy, PartialEq)]
enum Elem {
    Lit(&'static str),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Micro,
    Zone,
}

impl Elem {
    fn layout(self) -> &'static str {
        match self {
            Elem::Lit(l) => l,
            Elem::Year => "2006",
            Elem::Month => "01",
            Elem::Day => "02",
            Elem::Hour => "15",
            Elem::Minute => "04",
            Elem::Second => "05",
            Elem::Micro => ".000000",
            Elem::Zone => "Z07:00",
        }
    }
}

/// Go's `quote` in package time: ASCII printable as is (`"` and `\` escaped), other bytes `\xNN`.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if (c as u32) < 0x20 || (c as u32) >= 0x80 {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Go's `getnum`: one or (`fixed`: exactly) two digits.
fn getnum(s: &str, fixed: bool) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if !digit(0) {
        return None;
    }
    if !digit(1) {
        if fixed {
            return None;
        }
        return Some((i64::from(b[0] - b'0'), &s[1..]));
    }
    Some((
        i64::from(b[0] - b'0') * 10 + i64::from(b[1] - b'0'),
        &s[2..],
    ))
}

/// Go's `atoi` on a whole string (an optional sign, then digits only).
fn atoi(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Go's `parseNanoseconds` of `value[..nbytes]` (a `.` or `,` then digits).
fn nanoseconds(value: &str, nbytes: usize) -> Option<i64> {
    if !value.starts_with(['.', ',']) {
        return None;
    }
    let nbytes = nbytes.min(10);
    let mut ns = atoi(value.get(1..nbytes)?)?;
    for _ in nbytes..10 {
        ns *= 10;
    }
    Some(ns)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `time.Parse(layout, value)` for RFC 3339 (`micro`: RFC3339Micro), with Go's error text.
pub(crate) fn parse(value: &str, micro: bool) -> Result<Instant, String> {
    use Elem::*;
    let layout = if micro { RFC3339_MICRO } else { RFC3339 };
    let mut elems = vec![
        Year,
        Lit("-"),
        Month,
        Lit("-"),
        Day,
        Lit("T"),
        Hour,
        Lit(":"),
        Minute,
        Lit(":"),
        Second,
    ];
    if micro {
        elems.push(Micro);
    }
    elems.push(Zone);
    let cannot = |elem: &str, rest: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout),
            quote(rest),
            quote(elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", quote(value));
    let (mut year, mut month, mut day, mut hour, mut min, mut sec) = (0, 0, 0, 0, 0, 0);
    let (mut nsec, mut offset) = (0i64, 0i64);
    let mut rest = value;
    for (i, elem) in elems.iter().enumerate() {
        let hold = rest;
        let bad = || cannot(elem.layout(), hold);
        match *elem {
            Lit(l) => {
                // Go's `skip`: byte by byte; the error shows what is left where it failed.
                for b in l.bytes() {
                    if rest.as_bytes().first() != Some(&b) {
                        return Err(cannot(l, rest));
                    }
                    rest = &rest[1..];
                }
            }
            Year => {
                let p = rest.get(..4).ok_or_else(bad)?;
                year = atoi(p).ok_or_else(bad)?;
                rest = &rest[4..];
            }
            Month => {
                (month, rest) = getnum(rest, true).ok_or_else(bad)?;
                if !(1..=12).contains(&month) {
                    return Err(range("month"));
                }
            }
            Day => (day, rest) = getnum(rest, true).ok_or_else(bad)?,
            Hour => {
                (hour, rest) = getnum(rest, false).ok_or_else(bad)?;
                if !(0..24).contains(&hour) {
                    return Err(range("hour"));
                }
            }
            Minute => {
                (min, rest) = getnum(rest, true).ok_or_else(bad)?;
                if !(0..60).contains(&min) {
                    return Err(range("minute"));
                }
            }
            Second => {
                (sec, rest) = getnum(rest, true).ok_or_else(bad)?;
                if !(0..60).contains(&sec) {
                    return Err(range("second"));
                }
                // A fraction the layout does not have is read all the same.
                let b = rest.as_bytes();
                if b.len() >= 2
                    && matches!(b[0], b'.' | b',')
                    && b[1].is_ascii_digit()
                    && elems.get(i + 1) != Some(&Micro)
                {
                    let n = 2 + b[2..].iter().take_while(|c| c.is_ascii_digit()).count();
                    nsec = nanoseconds(rest, n).ok_or_else(bad)?;
                    rest = &rest[n..];
                }
            }
            Micro => {
                if rest.len() < 7 {
                    return Err(bad());
                }
                nsec = nanoseconds(rest, 7).ok_or_else(bad)?;
                if nsec < 0 {
                    return Err(range("fractional second"));
                }
                rest = &rest[7..];
            }
            Zone => {
                if let Some(r) = rest.strip_prefix('Z') {
                    rest = r;
                } else {
                    let b = rest.as_bytes();
                    if b.len() < 6 || b[3] != b':' {
                        return Err(bad());
                    }
                    // Two digits each (bytes: the value may hold any UTF-8 there).
                    let two = |i: usize| {
                        (b[i].is_ascii_digit() && b[i + 1].is_ascii_digit())
                            .then(|| i64::from(b[i] - b'0') * 10 + i64::from(b[i + 1] - b'0'))
                    };
                    let (Some(hr), Some(mm)) = (two(1), two(4)) else {
                        return Err(bad());
                    };
                    if hr > 24 {
                        return Err(range("time zone offset hour"));
                    }
                    if mm > 60 {
                        return Err(range("time zone offset minute"));
                    }
                    offset = (hr * 60 + mm) * 60;
                    match b[0] {
                        b'+' => {}
                        b'-' => offset = -offset,
                        _ => return Err(bad()),
                    }
                    rest = &rest[6..];
                }
            }
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(rest)
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(format!("parsing time {}: day out of range", quote(value)));
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset;
    Ok(Instant {
        secs,
        nanos: u32::try_from(nsec).unwrap_or(0),
    })
}

/// The instant as Go's encoder writes `metav1.Time` (`time.RFC3339` in UTC: whole seconds) or
/// `metav1.MicroTime` (`RFC3339Micro` in UTC).
pub(crate) fn format(t: &Instant, micro: bool) -> String {
    let days = t.secs.div_euclid(86_400);
    let s = t.secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (s / 3600, s % 3600 / 60, s % 60);
    if micro {
        let us = t.nanos / 1000;
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{us:06}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(v: &str, micro: bool) -> Result<String, String> {
        parse(v, micro).map(|t| format(&t, micro))
    }

    #[test]
    fn valid_times_are_written_in_utc() {
        assert_eq!(
            roundtrip("2024-02-29T23:59:59Z", false).unwrap(),
            "2024-02-29T23:59:59Z"
        );
        assert_eq!(
            roundtrip("2024-01-01T01:30:00.987+02:00", false).unwrap(),
            "2023-12-31T23:30:00Z"
        );
        assert_eq!(
            roundtrip("2024-01-01T00:00:00.123456+00:00", true).unwrap(),
            "2024-01-01T00:00:00.123456Z"
        );
        assert_eq!(
            roundtrip("1969-12-31T23:00:00.000001-01:30", true).unwrap(),
            "1970-01-01T00:30:00.000001Z"
        );
        assert_eq!(
            roundtrip("2024-01-01T5:00:00Z", false).unwrap(),
            "2024-01-01T05:00:00Z"
        );
    }

    #[test]
    fn never_panics() {
        // Mutations of valid times with a deterministic generator: every byte position replaced
        // by ASCII and multi-byte characters, and truncations.
        let base = "2024-01-01T00:00:00.123456+01:00";
        let subs = [
            "0", "9", ":", ".", "Z", "+", "-", "é", "€", "😀", "", "T", " ",
        ];
        for i in 0..base.len() {
            for sub in subs {
                let v = format!("{}{sub}{}", &base[..i], &base[i + 1..]);
                let _ = parse(&v, true);
                let _ = parse(&v, false);
            }
            let _ = parse(&base[..i], true);
            let _ = parse(&base[..i], false);
        }
    }

    #[test]
    fn go_errors() {
        assert_eq!(
            roundtrip("2024-01-01T00:00:00Z", true).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
        );
        assert_eq!(
            roundtrip("abc", false).unwrap_err(),
            r#"parsing time "abc" as "2006-01-02T15:04:05Z07:00": cannot parse "abc" as "2006""#
        );
        assert_eq!(
            roundtrip("2024-01-01 00:00:00Z", false).unwrap_err(),
            r#"parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T""#
        );
        assert_eq!(
            roundtrip("2024-13-01T00:00:00Z", false).unwrap_err(),
            r#"parsing time "2024-13-01T00:00:00Z": month out of range"#
        );
        assert_eq!(
            roundtrip("2023-02-29T00:00:00Z", false).unwrap_err(),
            r#"parsing time "2023-02-29T00:00:00Z": day out of range"#
        );
        assert_eq!(
            roundtrip("2024-01-01T00:00:00Zx", false).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00Zx": extra text: "x""#
        );
        for odd in [
            "2024-01-01T00:00:00é1:00",
            "2024-01-01T00:00:00+01:0é",
            "é",
            "2024-01-01T00:00:00.12345é",
        ] {
            assert!(roundtrip(odd, true).is_err(), "{odd}");
            assert!(roundtrip(odd, false).is_err(), "{odd}");
        }
        assert_eq!(
            roundtrip("2024-01-01T00:00:00", false).unwrap_err(),
            r#"parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#
        );
    }
}

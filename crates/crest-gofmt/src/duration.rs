//! Go's `time.ParseDuration`, with its error texts: kube-apiserver quotes them in the 400 for
//! a malformed `?timeout=`.

use crate::go_quote;

/// Parses a Go duration (`300ms`, `-1.5h`, `2h45m`; units `ns`, `us`/`µs`/`μs`, `ms`, `s`,
/// `m`, `h`) into nanoseconds, or the error Go's `time.ParseDuration` gives.
pub fn go_parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(orig));
    let mut s = orig;
    let mut neg = false;
    if let Some(c) = s.chars().next() {
        if c == '-' || c == '+' {
            neg = c == '-';
            s = &s[1..];
        }
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    // Go accumulates in a uint64 and allows exactly 1<<63 for a negative duration.
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part.
        let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for &c in &b[..int_len] {
            if v > (LIMIT - 1) / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        s = &s[int_len..];
        let pre = int_len > 0;
        // The fraction: digits past what a uint64 holds are dropped, as Go does.
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if s.starts_with('.') {
            s = &s[1..];
            let frac_len = s.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for c in s[..frac_len].bytes() {
                if overflow {
                    continue;
                }
                if f > (i64::MAX as u64 - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            s = &s[frac_len..];
            post = frac_len > 0;
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .take_while(|c| *c != b'.' && !c.is_ascii_digit())
            .count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", go_quote(orig)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let unit_ns: u64 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit),
                    go_quote(orig)
                ))
            }
        };
        if v > LIMIT / unit_ns {
            return Err(invalid());
        }
        v *= unit_ns;
        if f > 0 {
            v += (f as f64 * (unit_ns as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        total += v;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    if total > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(total as i64)
}

#[cfg(test)]
mod tests {
    use super::go_parse_duration as p;

    #[test]
    fn go_durations() {
        assert_eq!(p("0"), Ok(0));
        assert_eq!(p("30s"), Ok(30_000_000_000));
        assert_eq!(p("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(p("2h45m"), Ok(9_900_000_000_000));
        assert_eq!(p("-1ms"), Ok(-1_000_000));
        assert_eq!(p(".5s"), Ok(500_000_000));
        assert_eq!(p("1\u{b5}s"), Ok(1_000));
        assert_eq!(p("-9223372036854775808ns"), Ok(i64::MIN));
        assert_eq!(p("abc"), Err("time: invalid duration \"abc\"".into()));
        assert_eq!(p(""), Err("time: invalid duration \"\"".into()));
        assert_eq!(p("."), Err("time: invalid duration \".\"".into()));
        assert_eq!(p("10"), Err("time: missing unit in duration \"10\"".into()));
        assert_eq!(
            p("10x"),
            Err("time: unknown unit \"x\" in duration \"10x\"".into())
        );
        assert_eq!(
            p("9223372036854775808ns"),
            Err("time: invalid duration \"9223372036854775808ns\"".into())
        );
        assert_eq!(
            p("3000000h"),
            Err("time: invalid duration \"3000000h\"".into())
        );
    }
}
